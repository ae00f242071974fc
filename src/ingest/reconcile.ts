/**
 * PostgreSQL is the record of what work there is; Redis only carries it. A partition that is
 * pending or running but has no job that will run it (Redis lost its data, BullMQ failed the job
 * while the database was away, a crash between planning and enqueueing) is queued again here, with
 * the job planning would have made (same id, same payload). Deterministic ids make it safe for
 * every worker and every `--wait` to do this at once.
 */
import type { Queue } from 'bullmq';
import { proveDoneWithoutProof } from '../db/coverage.js';
import type { Db } from '../db/connection.js';
import { stillUnfinished, unfinishedPartitions } from '../db/partitions.js';
import type { Operation } from '../domain/spec.js';
import type { Log } from '../log.js';
import { jobOfPartition, type RebuiltJob } from '../planning/work.js';
import { enqueueJobs } from '../queue/enqueue.js';

export interface ReconcileResult {
  checked: number;
  /** Partitions whose job was missing, failed or finished, queued again: `stream partition` each. */
  requeued: string[];
  /** Partitions no job can be rebuilt for (stream params unreadable): reported, never guessed. */
  unbuildable: string[];
}

/** BullMQ states in which a job will still run (or is running). */
const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);
const PAGE = 1_000;
const PARALLEL = 50;

const label = (r: { streamKey: string; partitionKey: string }) => `${r.streamKey} ${r.partitionKey}`;
const refKey = (r: { streamKey: string; partitionKey: string }) => `${r.streamKey}\u0000${r.partitionKey}`;

async function lostJobs(queues: Record<Operation, Queue>, jobs: RebuiltJob[]): Promise<RebuiltJob[]> {
  const lost: RebuiltJob[] = [];
  for (let i = 0; i < jobs.length; i += PARALLEL) {
    const slice = jobs.slice(i, i + PARALLEL);
    const states = await Promise.all(slice.map((j) => queues[j.operation].getJobState(j.job.jobId)));
    slice.forEach((j, k) => {
      if (!LIVE_STATES.has(states[k]!)) lost.push(j);
    });
  }
  return lost;
}

export async function reconcileQueues(db: Db, queues: Record<Operation, Queue>): Promise<ReconcileResult> {
  const result: ReconcileResult = { checked: 0, requeued: [], unbuildable: [] };
  for (let after: { streamKey: string; partitionKey: string } | null = null; ;) {
    const rows = await unfinishedPartitions(db, PAGE, after);
    if (rows.length === 0) return result;
    after = rows[rows.length - 1]!;
    result.checked += rows.length;
    const jobs: RebuiltJob[] = [];
    for (const row of rows) {
      const job = jobOfPartition(row);
      if (job) jobs.push(job);
      else result.unbuildable.push(label(row));
    }
    const lost = await lostJobs(queues, jobs);
    // A job may have finished its partition between the two reads: only what is still unfinished goes back.
    const open = await stillUnfinished(
      db,
      lost.map((j) => j.job.data),
    );
    const again = lost.filter((j) => open.has(refKey(j.job.data)));
    for (const op of ['earthquake', 'indicator'] as const) {
      const batch: Array<{ jobId: string; data: object }> = again.filter((j) => j.operation === op).map((j) => j.job);
      if (batch.length > 0) await enqueueJobs(queues[op], batch);
    }
    result.requeued.push(...again.map((j) => label(j.job.data)));
    if (rows.length < PAGE) return result;
  }
}

export interface Reconciler {
  /** Runs one pass now (between the periodic ones) and returns what it did. */
  runOnce(): Promise<ReconcileResult | null>;
  stop(): Promise<void>;
}

/**
 * Reconciles every `intervalMs` (and once at start), never two passes at once. A pass that fails
 * (database or Redis away) is logged and tried again at the next tick.
 */
export function startReconciler(db: Db, queues: Record<Operation, Queue>, log: Log, intervalMs: number): Reconciler {
  let running: Promise<ReconcileResult | null> | null = null;
  let stopped = false;
  const pass = (): Promise<ReconcileResult | null> => {
    if (running) return running;
    running = reconcileQueues(db, queues)
      .then(async (r) => {
        const proven = await proveDoneWithoutProof(db);
        if (proven > 0)
          log.info(
            { proven },
            'windows finished without a proof (by an older version) proven as of when they finished',
          );
        if (r.requeued.length > 0)
          log.warn(
            { requeued: r.requeued.length, first: r.requeued.slice(0, 5) },
            'partitions had no job that would run them: queued again',
          );
        if (r.unbuildable.length > 0)
          log.error(
            { partitions: r.unbuildable.slice(0, 5) },
            'partitions whose job cannot be rebuilt (stream params unreadable)',
          );
        return r;
      })
      .catch((err: unknown) => {
        log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'queue reconciliation failed; trying again later',
        );
        return null;
      })
      .finally(() => (running = null));
    return running;
  };
  const timer = setInterval(() => void (stopped ? undefined : pass()), intervalMs);
  timer.unref();
  void pass();
  return {
    runOnce: pass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
