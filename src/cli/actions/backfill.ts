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
import { loadEnv } from '../runtime.js';
import type { Session } from '../session.js';
import { parseMaxBilledCalls } from '../flags.js';
import { confirmBackfill, dryRun, type PlanFlags } from './plan.js';
import { currentYearEverywhere } from '../../domain/time.js';

export interface RunFlags extends PlanFlags {
  wait?: boolean;
  inline?: boolean;
  refresh?: boolean;
  allowInsecureHttp?: boolean;
  maxBilledCalls?: string;
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
  // The queue, the workers and the gateway client load only here: a dry run needs none of them.
  const [{ awaitBackfill, openSession }, { recordBackfill }] = await Promise.all([
    import('../session.js'),
    import('../../ingest/backfills.js'),
  ]);
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

export async function backfillEarthquakes(f: EarthquakeRangeFlags & RunFlags): Promise<void> {
  await run(f, { operation: 'earthquake', ...parseEarthquakeFlags(f, Date.now()), refresh: Boolean(f.refresh) });
}

export async function backfillIndicators(f: IndicatorRangeFlags & RunFlags): Promise<void> {
  const parsed = parseIndicatorFlags(f, currentYearEverywhere(Date.now()));
  await run(f, { operation: 'indicator', ...parsed, refresh: Boolean(f.refresh) });
}

export async function backfillStream(f: RunFlags & { stream?: string; config: string }): Promise<void> {
  if (!f.stream) throw new UsageError('backfill needs a subcommand (earthquakes, indicators) or --stream NAME');
  await run(f, await streamRequest(f.config, f.stream, Boolean(f.refresh), Date.now()));
}
