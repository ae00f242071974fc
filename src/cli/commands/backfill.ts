import { Command, Option } from 'commander';
import { loadJobsFile } from '../../config/jobs-file.js';
import {
  enqueueEarthquakeBackfill,
  enqueueIndicatorBackfill,
  type EnqueueSummary,
} from '../../ingest/enqueue-backfill.js';
import { resolveYearRange } from '../../planning/chunks.js';
import { EXIT } from '../exit.js';
import {
  configOption,
  earthquakeRangeOptions,
  indicatorRangeOptions,
  parseCodeFlag,
  parseInstantFlag,
  parseNumberFlag,
  parseYearFlag,
} from '../flags.js';
import { allowInsecureHttpOption, loadEnv } from '../runtime.js';
import { awaitBackfill, openSession } from '../session.js';
import { backfillControlCommands, maxBilledCallsOption, parseMaxBilledCalls } from './backfill-control.js';
import { recordBackfill } from '../../ingest/backfills.js';
import { addPlanOptions, confirmBackfill, dryRun, type PlanFlags } from './plan.js';
import type { BackfillRequest } from '../../ingest/plan.js';
import {
  circleFromParts,
  countryCodeSchema,
  indicatorCodeSchema,
  latitudeSchema,
  longitudeSchema,
  magnitudeSchema,
  radiusKmSchema,
  type EarthquakeFilters,
} from '../../domain/filters.js';
import { UsageError } from '../../errors.js';

interface RunFlags extends PlanFlags {
  wait?: boolean;
  inline?: boolean;
  refresh?: boolean;
  allowInsecureHttp?: boolean;
  maxBilledCalls?: string;
}

function addRunOptions(c: Command): Command {
  return addPlanOptions(c)
    .option('--wait', 'wait until the enqueued jobs finish (progress on stderr); exit 0 only if all succeeded')
    .option(
      '--inline',
      'also run workers in this process, so this command alone does the whole backfill (implies --wait)',
    )
    .option('--refresh', 're-read partitions already ingested for the same filters')
    .addOption(maxBilledCallsOption())
    .addOption(allowInsecureHttpOption());
}

/** `backfill <id>: ...`: the id every control command takes. Pure. */
export function enqueuedLine(backfillId: string, summaries: EnqueueSummary[], maxBilledCalls: number | null): string {
  const planned = summaries.reduce((n, s) => n + s.planned, 0);
  const cap = maxBilledCalls === null ? '' : `, at most ${maxBilledCalls} billed calls`;
  if (planned === 0) return `backfill ${backfillId}: nothing to fetch`;
  return `backfill ${backfillId}: ${planned} partitions enqueued${cap}; \`gateway-ingest backfill pause|resume|cancel ${backfillId}\` controls it`;
}

function printSummaries(summaries: EnqueueSummary[]): void {
  for (const s of summaries) {
    const skipped = s.planned === 0 ? ' (everything already ingested; --refresh re-reads)' : '';
    process.stdout.write(
      `${s.streamKey}: ${s.planned} partitions planned, ${s.added} jobs enqueued, ${s.alreadyQueued} already queued${skipped}\n`,
    );
  }
}

/** Enqueues, then optionally runs and waits: the shape every backfill variant shares. */
async function run(
  flags: RunFlags,
  request: BackfillRequest,
  enqueue: (s: Awaited<ReturnType<typeof openSession>>, backfillId: string) => Promise<EnqueueSummary[]>,
): Promise<void> {
  const maxBilledCalls = parseMaxBilledCalls('--max-billed-calls', flags.maxBilledCalls);
  const env = loadEnv(process.env, { allowInsecureHttp: flags.allowInsecureHttp });
  if (flags.dryRun) return dryRun(env, request, flags);
  const session = await openSession(env, { needGateway: Boolean(flags.inline) });
  try {
    // A cap within CONFIRM_BILLED_CALLS already bounds what the backfill may spend: nothing to confirm.
    const capped = maxBilledCalls !== null && maxBilledCalls <= env.confirmBilledCalls;
    if (!(await confirmBackfill(session, request, capped ? { ...flags, yes: true } : flags))) return;
    // Recorded before its partitions, so that no job of it runs without its control and budget.
    const backfillId = await recordBackfill(session.db.db, request, maxBilledCalls);
    const summaries = await enqueue(session, backfillId);
    printSummaries(summaries);
    process.stdout.write(`${enqueuedLine(backfillId, summaries, maxBilledCalls)}\n`);
    if (flags.wait || flags.inline) {
      process.exitCode = await awaitBackfill(
        session,
        summaries.map((s) => ({ streamKey: s.streamKey, partitionKeys: s.partitionKeys })),
        Boolean(flags.inline),
        { backfillId },
      );
    } else process.exitCode = EXIT.ok;
  } finally {
    await session.close();
  }
}

interface EarthquakeFlags extends RunFlags {
  from: string;
  to?: string;
  minMagnitude?: string;
  latitude?: string;
  longitude?: string;
  radiusKm?: string;
}

/** Pure flag validation: every problem names the flag and the value. */
export function parseEarthquakeFlags(
  f: EarthquakeFlags,
  nowMs: number,
): { filters: EarthquakeFilters; fromMs: number; toMs: number } {
  const fromMs = parseInstantFlag('--from', f.from);
  const toMs = f.to === undefined ? nowMs : parseInstantFlag('--to', f.to);
  if (fromMs > nowMs) throw new UsageError(`--from: "${f.from}" is in the future`);
  if (toMs <= fromMs) throw new UsageError(`--to: "${f.to}" must be after --from "${f.from}"`);
  const minMagnitude = parseNumberFlag('--min-magnitude', f.minMagnitude, magnitudeSchema);
  const circle = circleFromParts({
    latitude: parseNumberFlag('--latitude', f.latitude, latitudeSchema),
    longitude: parseNumberFlag('--longitude', f.longitude, longitudeSchema),
    radiusKm: parseNumberFlag('--radius-km', f.radiusKm, radiusKmSchema),
  });
  if (circle === 'partial')
    throw new UsageError('--latitude, --longitude and --radius-km must be given together or not at all');
  // Windows starting after now would be refused by the gateway; history ends now.
  return { filters: { minMagnitude, circle }, fromMs, toMs: Math.min(toMs, nowMs) };
}

function earthquakesCommand(): Command {
  const c = new Command('earthquakes').description('backfill earthquake events in windows of at most 31 days');
  return addRunOptions(earthquakeRangeOptions(c)).action(async (f: EarthquakeFlags) => {
    const parsed = parseEarthquakeFlags(f, Date.now());
    await run(f, { operation: 'earthquake', ...parsed, refresh: Boolean(f.refresh) }, async (s, backfillId) => [
      await enqueueEarthquakeBackfill(s.db.db, s.queues.earthquake, {
        ...parsed,
        refresh: Boolean(f.refresh),
        backfillId,
      }),
    ]);
  });
}

interface IndicatorFlags extends RunFlags {
  indicator: string[];
  country: string[];
  fromYear?: string;
  toYear?: string;
}

export function parseIndicatorFlags(f: IndicatorFlags, currentYear: number) {
  const indicators = [...new Set(f.indicator)].map((i) => parseCodeFlag('--indicator', i, indicatorCodeSchema));
  const countries = [...new Set(f.country.map((c) => c.toUpperCase()))].map((c) =>
    parseCodeFlag('--country', c, countryCodeSchema),
  );
  if (indicators.length === 0) throw new UsageError('--indicator: at least one indicator code is required');
  if (countries.length === 0) throw new UsageError('--country: at least one country code is required');
  const fromYear = parseYearFlag('--from-year', f.fromYear);
  const toYear = parseYearFlag('--to-year', f.toYear);
  try {
    return { indicators, countries, ...resolveYearRange({ fromYear, toYear, currentYear }) };
  } catch (e) {
    // The flag the message is about comes first in it ("fromYear 2010 is after toYear 2000").
    const flag = (e as Error).message.startsWith('toYear') ? '--to-year' : '--from-year';
    throw new UsageError(
      `${flag}: ${(e as Error).message.replace(/fromYear/g, '--from-year').replace(/toYear/g, '--to-year')}`,
    );
  }
}

function indicatorsCommand(): Command {
  const c = new Command('indicators').description(
    'backfill yearly indicator values, one job per (indicator, country, chunk of at most 70 years)',
  );
  return addRunOptions(indicatorRangeOptions(c)).action(async (f: IndicatorFlags) => {
    const parsed = parseIndicatorFlags(f, new Date().getUTCFullYear());
    await run(f, { operation: 'indicator', ...parsed, refresh: Boolean(f.refresh) }, (s, backfillId) =>
      enqueueIndicatorBackfill(s.db.db, s.queues.indicator, { ...parsed, refresh: Boolean(f.refresh), backfillId }),
    );
  });
}

interface StreamFlags extends RunFlags {
  stream?: string;
  config: string;
}

export function backfillCommand(): Command {
  const c = new Command('backfill')
    .description(
      'plan and enqueue history: `backfill earthquakes`, `backfill indicators`, or `backfill --stream NAME` from jobs.yaml',
    )
    .addOption(
      new Option('--stream <name>', 'backfill a stream declared in jobs.yaml from its backfill_from / from_year'),
    )
    .addOption(configOption())
    .enablePositionalOptions();
  addRunOptions(c);
  c.addCommand(earthquakesCommand());
  c.addCommand(indicatorsCommand());
  for (const control of backfillControlCommands()) c.addCommand(control);
  return c.action(async (f: StreamFlags) => {
    if (!f.stream) throw new UsageError('backfill needs a subcommand (earthquakes, indicators) or --stream NAME');
    const file = await loadJobsFile(f.config);
    const quake = file.earthquakes.find((s) => s.name === f.stream);
    const indicator = file.indicators.find((s) => s.name === f.stream);
    if (!quake && !indicator) throw new UsageError(`--stream: "${f.stream}" is not declared in ${f.config}`);
    if (quake) {
      if (!quake.backfillFrom) throw new UsageError(`--stream: "${f.stream}" has no backfill_from in ${f.config}`);
      const request = {
        filters: { minMagnitude: quake.minMagnitude, circle: quake.circle },
        fromMs: quake.backfillFrom.getTime(),
        toMs: Date.now(),
        refresh: Boolean(f.refresh),
        streamName: quake.name,
      };
      await run(f, { operation: 'earthquake', ...request }, async (s, backfillId) => [
        await enqueueEarthquakeBackfill(s.db.db, s.queues.earthquake, { ...request, backfillId }),
      ]);
      return;
    }
    const years = resolveYearRange({
      fromYear: indicator!.fromYear ?? undefined,
      toYear: indicator!.toYear ?? undefined,
      currentYear: new Date().getUTCFullYear(),
    });
    const request = {
      indicators: indicator!.indicators,
      countries: indicator!.countries,
      ...years,
      refresh: Boolean(f.refresh),
      streamName: indicator!.name,
    };
    await run(f, { operation: 'indicator', ...request }, (s, backfillId) =>
      enqueueIndicatorBackfill(s.db.db, s.queues.indicator, { ...request, backfillId }),
    );
  });
}
