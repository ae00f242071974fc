/**
 * A partition is one unit of work of a stream: an earthquake window or an indicator year chunk.
 * Its state changes only through the named transitions below (written by db/partitions.ts).
 */
import type { Operation } from './spec.js';

/**
 * `partial`: every instant of the window was fetched except intervals no query could resolve
 * (more events in two seconds than one answer may hold); a re-run retries only those.
 */
export const PARTITION_STATE = {
  pending: 'pending',
  running: 'running',
  done: 'done',
  partial: 'partial',
  failed: 'failed',
} as const;
export type PartitionState = (typeof PARTITION_STATE)[keyof typeof PARTITION_STATE];
export const PARTITION_STATES = Object.values(PARTITION_STATE);

export type Transition = 'planned' | 'progress' | 'done' | 'partial' | 'failed' | 'cancelled' | 'reset';

/**
 * From which states each transition applies, and the state it leads to. A transition asked of a
 * partition in any other state leaves it as it is: a late answer never reopens a finished window,
 * and planning never undoes work that is done (only `reset`, a refresh, does).
 */
export const TRANSITIONS = {
  /** Planned again by a backfill: new, or retried after a failure. */
  planned: {
    from: [PARTITION_STATE.pending, PARTITION_STATE.failed, PARTITION_STATE.partial],
    to: PARTITION_STATE.pending,
  },
  /** An answer or a failed attempt was recorded; more calls are needed. */
  progress: { from: [PARTITION_STATE.pending, PARTITION_STATE.running], to: PARTITION_STATE.running },
  done: { from: [PARTITION_STATE.pending, PARTITION_STATE.running], to: PARTITION_STATE.done },
  partial: { from: [PARTITION_STATE.pending, PARTITION_STATE.running], to: PARTITION_STATE.partial },
  failed: { from: [PARTITION_STATE.pending, PARTITION_STATE.running], to: PARTITION_STATE.failed },
  /**
   * Its backfill was cancelled: given up on like a failure (error kind `cancelled`), keeping what
   * was written and the frontier, so that a later backfill plans it again and resumes it.
   */
  cancelled: { from: [PARTITION_STATE.pending, PARTITION_STATE.running], to: PARTITION_STATE.failed },
  /** A refresh: read the partition again from scratch, whatever it was. */
  reset: { from: PARTITION_STATES, to: PARTITION_STATE.pending },
} as const satisfies Record<Transition, { from: readonly PartitionState[]; to: PartitionState }>;

/** `last_error_kind` of a partition given up on because its backfill was cancelled. */
export const CANCELLED_ERROR_KIND = 'cancelled';

export function nextState(current: PartitionState, t: Transition): PartitionState {
  const rule = TRANSITIONS[t];
  return (rule.from as readonly PartitionState[]).includes(current) ? rule.to : current;
}

/** Nothing more will happen to it until it is planned again. */
export function isFinished(state: PartitionState): boolean {
  return state === PARTITION_STATE.done || state === PARTITION_STATE.partial || state === PARTITION_STATE.failed;
}

/** A partition as planned, before it is recorded and enqueued. */
export interface PlannedPartition {
  streamKey: string;
  partitionKey: string;
  operation: Operation;
  windowStart?: Date;
  windowEnd?: Date;
  startYear?: number;
  endYear?: number;
  jobId: string;
  /** The backfill that planned it (backfills.id); null or absent for scheduled runs. */
  backfillId?: string | null;
}

/** A partition row as stored, with its stream's params: what the queue reconciler rebuilds a job from. */
export interface StoredPartition {
  streamKey: string;
  partitionKey: string;
  operation: string;
  windowStart: Date | null;
  windowEnd: Date | null;
  startYear: number | null;
  endYear: number | null;
  params: unknown;
}
