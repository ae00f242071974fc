/**
 * One read of an earthquake window in progress, as its lanes (window-lanes.ts) and the answers they
 * bring back (window-answer.ts) share it. Only the job running the read holds it.
 */
import type { CallContext } from '../db/audit.js';
import type { OrderStats } from '../db/gateway-knowledge.js';
import { toRfc3339 } from '../domain/time.js';
import type { EarthquakeResult } from '../gateway/schemas.js';
import type { Frontier, Query, SharedCap } from '../planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../planning/work.js';
import type { Call } from './call.js';
import type { DeletionOutcome } from './deletions.js';
import type { JobContext, ProcessorDeps } from './deps.js';

export interface WindowOutcome {
  calls: number;
  rowsWritten: number;
  skipped: boolean;
  deletions?: DeletionOutcome | null;
}

export interface WindowRead {
  job: EarthquakeWindowJob;
  ctx: JobContext;
  deps: ProcessorDeps;
  backfillId: string | null;
  /** What is left to ask: moved by each answer, and split when lanes would otherwise idle. */
  frontier: Frontier;
  /** The first failure: no new call starts once it is set, and it is thrown once every call has landed. */
  failure: unknown;
  outcome: WindowOutcome;
  /** What the answers said of the gateway's order, shared with other workers when the read stops. */
  evidence: OrderStats;
  /** The cap floor was shared once already by this job. */
  capShared: boolean;
}

/**
 * A query's call as it came back: made (answered or failed), not made at all (stopping, database
 * away), or a probe not needed after all (`known`: what other reads learned meanwhile settles it).
 */
export type Landed =
  | { key: string; query: Query; call: CallContext; made: Call<EarthquakeResult> }
  | { key: string; query: Query; error: unknown }
  | { key: string; query: Query; known: SharedCap };

export function logFields(job: EarthquakeWindowJob, q: Query, ctx: JobContext) {
  return {
    operation: 'earthquake',
    stream: job.streamKey,
    window: job.partitionKey,
    query: `${toRfc3339(q.region.lo)}/${toRfc3339(q.region.hi)}`,
    purpose: q.purpose,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
  };
}
