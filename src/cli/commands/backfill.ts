import { Command, Option } from 'commander';
import { loadJobsFile } from '../../config/jobs-file.js';
import type { EarthquakeFilters } from '../../domain/streams.js';
import { LIMITS } from '../../gateway/schemas.js';
import { enqueueEarthquakeBackfill, enqueueIndicatorBackfill, type EnqueueSummary } from '../../ingest/enqueue-backfill.js';
import { resolveYearRange } from '../../planning/chunks.js';
import { countryCodeSchema, indicatorCodeSchema } from '../../gateway/schemas.js';
import { EXIT, UsageError } from '../exit.js';
import { collectList, parseInstantFlag, parseNumberFlag, parseYearFlag } from '../flags.js';
import { loadEnv } from '../runtime.js';
import { awaitBackfill, openSession } from '../session.js';
import { configOption } from './check-config.js';

interface RunFlags {
  wait?: boolean;
  inline?: boolean;
  refresh?: boolean;
}

function addRunOptions(c: Command): Command {
  return c
    .option('--wait', 'wait until the enqueued jobs finish (progress on stderr); exit 0 only if all succeeded')
    .option('--inline', 'also run workers in this process, so this command alone does the whole backfill (implies --wait)')
    .option('--refresh', 're-read partitions already ingested for the same filters');
}

function printSummaries(summaries: EnqueueSummary[]): void {
  for (const s of summaries) {
    const skipped = s.planned === 0 ? ' (everything already ingested; --refresh re-reads)' : '';
    process.stdout.write(`${s.streamKey}: ${s.planned} partitions planned, ${s.added} jobs enqueued, ${s.alreadyQueued} already queued${skipped}\n`);
  }
}

/** Enqueues, then optionally runs and waits: the shape every backfill variant shares. */
async function run(flags: RunFlags, enqueue: (s: Awaited<ReturnType<typeof openSession>>) => Promise<EnqueueSummary[]>): Promise<void> {
  const env = loadEnv();
  const session = await openSession(env, { needGateway: Boolean(flags.inline) });
  try {
    const summaries = await enqueue(session);
    printSummaries(summaries);
    if (flags.wait || flags.inline) {
      process.exitCode = await awaitBackfill(session, summaries.map((s) => ({ streamKey: s.streamKey, partitionKeys: s.partitionKeys })), Boolean(flags.inline));
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
export function parseEarthquakeFlags(f: EarthquakeFlags, nowMs: number): { filters: EarthquakeFilters; fromMs: number; toMs: number } {
  const fromMs = parseInstantFlag('--from', f.from);
  const toMs = f.to === undefined ? nowMs : parseInstantFlag('--to', f.to);
  if (fromMs > nowMs) throw new UsageError(`--from: "${f.from}" is in the future`);
  if (toMs <= fromMs) throw new UsageError(`--to: "${f.to}" must be after --from "${f.from}"`);
  const minMagnitude = parseNumberFlag('--min-magnitude', f.minMagnitude, { min: LIMITS.minMagnitude, max: LIMITS.maxMagnitude });
  const latitude = parseNumberFlag('--latitude', f.latitude, { min: -90, max: 90 });
  const longitude = parseNumberFlag('--longitude', f.longitude, { min: -180, max: 180 });
  const radiusKm = parseNumberFlag('--radius-km', f.radiusKm, { min: 0, max: LIMITS.maxRadiusKm, minExclusive: true });
  const circleParts = [latitude, longitude, radiusKm].filter((v) => v !== null).length;
  if (circleParts !== 0 && circleParts !== 3) {
    throw new UsageError('--latitude, --longitude and --radius-km must be given together or not at all');
  }
  const circle = circleParts === 3 ? { latitude: latitude!, longitude: longitude!, radiusKm: radiusKm! } : null;
  // Windows starting after now would be refused by the gateway; history ends now.
  return { filters: { minMagnitude, circle }, fromMs, toMs: Math.min(toMs, nowMs) };
}

function earthquakesCommand(): Command {
  const c = new Command('earthquakes')
    .description('backfill earthquake events in windows of at most 31 days')
    .requiredOption('--from <time>', 'start: RFC 3339 timestamp or YYYY-MM-DD (UTC midnight)')
    .option('--to <time>', 'end: RFC 3339 timestamp or YYYY-MM-DD (default: now)')
    .option('--min-magnitude <m>', 'minimum magnitude, -1 to 10')
    .option('--latitude <deg>', 'circle center latitude, -90 to 90')
    .option('--longitude <deg>', 'circle center longitude, -180 to 180')
    .option('--radius-km <km>', 'circle radius, above 0 and at most 20001.6');
  return addRunOptions(c).action(async (f: EarthquakeFlags) => {
    const parsed = parseEarthquakeFlags(f, Date.now());
    await run(f, async (s) => [await enqueueEarthquakeBackfill(s.db.db, s.queues.earthquake, { ...parsed, refresh: Boolean(f.refresh) })]);
  });
}

interface IndicatorFlags extends RunFlags {
  indicator: string[];
  country: string[];
  fromYear?: string;
  toYear?: string;
}

export function parseIndicatorFlags(f: IndicatorFlags, currentYear: number) {
  const indicators = [...new Set(f.indicator)];
  const countries = [...new Set(f.country.map((c) => c.toUpperCase()))];
  for (const i of indicators) {
    if (!indicatorCodeSchema.safeParse(i).success) throw new UsageError(`--indicator: "${i}" must be 3 to 64 characters of letters, digits, dot or underscore`);
  }
  for (const c of countries) {
    if (!countryCodeSchema.safeParse(c).success) throw new UsageError(`--country: "${c}" must be an ISO 3166-1 alpha-2 or alpha-3 code or an aggregate code (2-3 letters or digits)`);
  }
  if (indicators.length === 0) throw new UsageError('--indicator: at least one indicator code is required');
  if (countries.length === 0) throw new UsageError('--country: at least one country code is required');
  const fromYear = parseYearFlag('--from-year', f.fromYear);
  const toYear = parseYearFlag('--to-year', f.toYear);
  try {
    return { indicators, countries, ...resolveYearRange({ fromYear, toYear, currentYear }) };
  } catch (e) {
    const flag = /toYear/.test((e as Error).message) ? '--to-year' : '--from-year';
    throw new UsageError(`${flag}: ${(e as Error).message.replace(/fromYear|toYear/g, flag)}`);
  }
}

function indicatorsCommand(): Command {
  const c = new Command('indicators')
    .description('backfill yearly indicator values, one job per (indicator, country, chunk of at most 70 years)')
    .requiredOption('--indicator <codes>', 'indicator codes, comma-separated or repeated', collectList)
    .requiredOption('--country <codes>', 'country or aggregate codes (US, USA, CHN, WLD, ...), comma-separated or repeated', collectList)
    .option('--from-year <year>', 'first year, 1960 or later (default: nine years before --to-year)')
    .option('--to-year <year>', 'last year, not after the current year (default: the current year)');
  return addRunOptions(c).action(async (f: IndicatorFlags) => {
    const parsed = parseIndicatorFlags(f, new Date().getUTCFullYear());
    await run(f, (s) => enqueueIndicatorBackfill(s.db.db, s.queues.indicator, { ...parsed, refresh: Boolean(f.refresh) }));
  });
}

interface StreamFlags extends RunFlags {
  stream?: string;
  config: string;
}

export function backfillCommand(): Command {
  const c = new Command('backfill')
    .description('plan and enqueue history: `backfill earthquakes`, `backfill indicators`, or `backfill --stream NAME` from jobs.yaml')
    .addOption(new Option('--stream <name>', 'backfill a stream declared in jobs.yaml from its backfill_from / from_year'))
    .addOption(configOption())
    .enablePositionalOptions();
  addRunOptions(c);
  c.addCommand(earthquakesCommand());
  c.addCommand(indicatorsCommand());
  return c.action(async (f: StreamFlags) => {
    if (!f.stream) throw new UsageError('backfill needs a subcommand (earthquakes, indicators) or --stream NAME');
    const file = await loadJobsFile(f.config);
    const quake = file.earthquakes.find((s) => s.name === f.stream);
    const indicator = file.indicators.find((s) => s.name === f.stream);
    if (!quake && !indicator) throw new UsageError(`--stream: "${f.stream}" is not declared in ${f.config}`);
    if (quake) {
      if (!quake.backfillFrom) throw new UsageError(`--stream: "${f.stream}" has no backfill_from in ${f.config}`);
      const filters = { minMagnitude: quake.minMagnitude, circle: quake.circle };
      await run(f, async (s) => [
        await enqueueEarthquakeBackfill(s.db.db, s.queues.earthquake, { filters, fromMs: quake.backfillFrom!.getTime(), toMs: Date.now(), refresh: Boolean(f.refresh), streamName: quake.name }),
      ]);
      return;
    }
    const years = resolveYearRange({ fromYear: indicator!.fromYear ?? undefined, toYear: indicator!.toYear ?? undefined, currentYear: new Date().getUTCFullYear() });
    await run(f, (s) =>
      enqueueIndicatorBackfill(s.db.db, s.queues.indicator, { indicators: indicator!.indicators, countries: indicator!.countries, ...years, refresh: Boolean(f.refresh), streamName: indicator!.name }),
    );
  });
}
