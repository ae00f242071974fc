import { Command, Option } from 'commander';
import { recordBackfill } from '../../ingest/backfills.js';
import {
  enqueueEarthquakeBackfill,
  enqueueIndicatorBackfill,
  type EnqueueSummary,
} from '../../ingest/enqueue-backfill.js';
import type { BackfillRequest } from '../../ingest/plan.js';
import { UsageError } from '../../errors.js';
import {
  parseEarthquakeFlags,
  parseIndicatorFlags,
  streamRequest,
  type EarthquakeRangeFlags,
  type IndicatorRangeFlags,
} from '../backfill-request.js';
import { EXIT } from '../exit.js';
import { configOption, earthquakeRangeOptions, indicatorRangeOptions } from '../flags.js';
import { allowInsecureHttpOption, loadEnv } from '../runtime.js';
import { awaitBackfill, openSession, type Session } from '../session.js';
import { backfillControlCommands, maxBilledCallsOption, parseMaxBilledCalls } from './backfill-control.js';
import { addPlanOptions, confirmBackfill, dryRun, type PlanFlags } from './plan.js';

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
  return (
    `backfill ${backfillId}: ${planned} partitions enqueued${cap}; ` +
    `\`gateway-ingest backfill pause|resume|cancel ${backfillId}\` controls it`
  );
}

function printSummaries(summaries: EnqueueSummary[]): void {
  for (const s of summaries) {
    const skipped = s.planned === 0 ? ' (everything already ingested; --refresh re-reads)' : '';
    process.stdout.write(
      `${s.streamKey}: ${s.planned} partitions planned, ${s.added} jobs enqueued, ` +
        `${s.alreadyQueued} already queued${skipped}\n`,
    );
  }
}

/** The partitions of a backfill just recorded, on their queue. */
async function enqueue(s: Session, request: BackfillRequest, backfillId: string): Promise<EnqueueSummary[]> {
  return request.operation === 'earthquake'
    ? [await enqueueEarthquakeBackfill(s.db.db, s.queues.earthquake, { ...request, backfillId })]
    : enqueueIndicatorBackfill(s.db.db, s.queues.indicator, { ...request, backfillId });
}

/** Enqueues, then optionally runs and waits: the shape every backfill variant shares. */
async function run(flags: RunFlags, request: BackfillRequest): Promise<void> {
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
    const summaries = await enqueue(session, request, backfillId);
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

function earthquakesCommand(): Command {
  const c = new Command('earthquakes').description('backfill earthquake events in windows of at most 31 days');
  return addRunOptions(earthquakeRangeOptions(c)).action(async (f: EarthquakeRangeFlags & RunFlags) => {
    await run(f, { operation: 'earthquake', ...parseEarthquakeFlags(f, Date.now()), refresh: Boolean(f.refresh) });
  });
}

function indicatorsCommand(): Command {
  const c = new Command('indicators').description(
    'backfill yearly indicator values, one job per (indicator, country, chunk of at most 70 years)',
  );
  return addRunOptions(indicatorRangeOptions(c)).action(async (f: IndicatorRangeFlags & RunFlags) => {
    const parsed = parseIndicatorFlags(f, new Date().getUTCFullYear());
    await run(f, { operation: 'indicator', ...parsed, refresh: Boolean(f.refresh) });
  });
}

interface StreamFlags extends RunFlags {
  stream?: string;
  config: string;
}

export function backfillCommand(): Command {
  const c = new Command('backfill')
    .description(
      'plan and enqueue history: `backfill earthquakes`, `backfill indicators`, ' +
        'or `backfill --stream NAME` from jobs.yaml',
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
    await run(f, await streamRequest(f.config, f.stream, Boolean(f.refresh), Date.now()));
  });
}
