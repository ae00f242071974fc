import type { Db } from '../db/connection.js';
import { countFinished, type FinishedCount, type PartitionProgress } from '../db/partitions.js';
import type { Halt } from '../domain/backfill.js';
import { DeadlineError, settledWithin, withDeadline } from '../deadline.js';
import { isConnectionError } from '../errors.js';

export type WaitProgress = PartitionProgress;

/** Where the wait ended: every partition finished, or (with `halt`) the work is held and will not go on by itself. */
export type WaitResult = FinishedCount & { halt?: Halt };

/** The counts the wait ends with; the running totals are for progress only. */
const finishedOf = ({ total, done, partial, failed }: WaitProgress): FinishedCount => ({
  total,
  done,
  partial,
  failed,
});

export interface PartitionRef {
  streamKey: string;
  partitionKeys: string[];
}

export interface WaitOptions {
  pollMs?: number;
  signal?: AbortSignal;
  /** Called on each poll the database does not answer (the wait goes on). */
  onOutage?: (e: Error) => void;
  /** Called between polls (reconciliation, worker presence); its failures never end the wait. */
  onTick?: () => Promise<void>;
  /** Whether the work is held (paused, cancelled, at a budget): the wait then ends without it. */
  halt?: () => Promise<Halt | null>;
  /**
   * Subscribes to news that a job ended (workers in this process), so that the next poll comes at
   * once instead of after up to `pollMs`; returns the unsubscribe.
   */
  wakeups?: (wake: () => void) => () => void;
}

/** A poll PostgreSQL has not answered within this is reported as an outage (the wait goes on). */
export const POLL_DEADLINE_MS = 3_000;

/** Reconciliation and worker checks between polls: bounded, so a silent Redis cannot stall the wait. */
const TICK_DEADLINE_MS = 10_000;

function haltWithin(options: WaitOptions): Promise<Halt | null> {
  return options.halt ? withDeadline(options.halt(), POLL_DEADLINE_MS, 'PostgreSQL or Redis') : Promise.resolve(null);
}

export function isFinishedCount(p: FinishedCount): boolean {
  return p.done + p.partial + p.failed >= p.total;
}

/**
 * Polls partition state, the source of truth whichever process runs the jobs, until every
 * partition is finished or the work is held. A database outage only pauses the wait: the work
 * goes on (or waits too) and the answer is still to come.
 */
export async function waitForPartitions(
  db: Db,
  refs: PartitionRef[],
  onProgress: (p: WaitProgress) => void,
  options: WaitOptions = {},
): Promise<WaitResult> {
  const aborted = abortedPromise(options.signal);
  // A signal ends the wait at once, whatever the poll in progress is waiting for.
  const loop = pollLoop(db, refs, onProgress, options);
  const stopped = aborted.then(() => 'stopped' as const);
  const first = await Promise.race([loop.result, stopped]);
  if (first !== 'stopped') return first;
  // The poll still running ends by itself (it sees the signal); what it may throw then is nobody's.
  loop.result.catch(() => undefined);
  return finishedOf(loop.last());
}

/** `ms`, or until a wakeup comes first. */
function pause(ms: number, wakeups: WaitOptions['wakeups']): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe?.();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = wakeups?.(done);
  });
}

function abortedPromise(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise<void>(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function pollLoop(db: Db, refs: PartitionRef[], onProgress: (p: WaitProgress) => void, options: WaitOptions) {
  let last: WaitProgress = {
    total: refs.reduce((n, r) => n + r.partitionKeys.length, 0),
    done: 0,
    partial: 0,
    failed: 0,
    rowsWritten: 0,
    billedCalls: 0,
  };
  const result = (async (): Promise<WaitResult> => {
    for (;;) {
      try {
        last = await withDeadline(countFinished(db, refs), POLL_DEADLINE_MS, 'PostgreSQL');
        onProgress(last);
        if (isFinishedCount(last)) {
          // Partitions a cancel gave up on are finished as failed: say it was the cancel.
          const halt = last.done + last.partial < last.total ? await haltWithin(options) : null;
          return halt?.kind === 'cancelled' ? { ...finishedOf(last), halt } : finishedOf(last);
        }
        const halt = await haltWithin(options);
        if (halt) {
          // A job may have finished the last partition between the two reads: counted again, that wins,
          // unless the cancel itself finished them (as failed): then it was the cancel.
          last = await withDeadline(countFinished(db, refs), POLL_DEADLINE_MS, 'PostgreSQL');
          onProgress(last);
          const finished = isFinishedCount(last) && halt.kind !== 'cancelled';
          return finished ? finishedOf(last) : { ...finishedOf(last), halt };
        }
      } catch (e) {
        // A silent connection is an outage like a refused one: the pool replaces it, the wait goes on.
        if (!isConnectionError(e) && !(e instanceof DeadlineError)) throw e;
        options.onOutage?.(e as Error);
      }
      if (options.signal?.aborted) return finishedOf(last);
      await settledWithin(options.onTick?.() ?? Promise.resolve(), TICK_DEADLINE_MS);
      await pause(options.pollMs ?? 500, options.wakeups);
    }
  })();
  return { result, last: () => last };
}
