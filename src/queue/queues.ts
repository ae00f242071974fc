import { createHash } from 'node:crypto';
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Operation } from '../gateway/schemas.js';

export const QUEUE_NAMES = { earthquake: 'earthquake-windows', indicator: 'indicator-chunks' } as const satisfies Record<
  Operation,
  string
>;

export interface QueueSettings {
  connection: ConnectionOptions;
  prefix: string;
  attempts: number;
  retryBaseDelayMs: number;
}

/** Named so the worker's backoff strategy knows the jobs it owns. */
export const BACKOFF_TYPE = 'jittered-retry-after';

/** Retention is bounded: BullMQ keeps finished jobs in Redis until told otherwise. */
export function defaultJobOptions(s: Pick<QueueSettings, 'attempts'>): JobsOptions {
  return {
    attempts: s.attempts,
    backoff: { type: BACKOFF_TYPE },
    removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
    removeOnFail: { age: 30 * 24 * 3600, count: 10_000 },
  };
}

export function openQueue(operation: Operation, s: QueueSettings): Queue {
  return new Queue(QUEUE_NAMES[operation], {
    connection: s.connection,
    prefix: s.prefix,
    defaultJobOptions: defaultJobOptions(s),
  });
}

/** Deterministic, so enqueueing the same partition twice never doubles the work. */
export function partitionJobId(operation: Operation, streamKey: string, partitionKey: string): string {
  const stream = createHash('sha256').update(streamKey).digest('hex').slice(0, 16);
  const part = partitionKey.replace(/[^A-Za-z0-9]+/g, '');
  return `${operation}-${stream}-${part}`;
}

/** Exponential with full jitter (AWS architecture blog), capped, unless the gateway said when. */
export function retryDelayMs(attemptsMade: number, baseMs: number, retryAfterMs: number | null, random = Math.random): number {
  if (retryAfterMs !== null) return retryAfterMs + Math.floor(random() * Math.min(1000, baseMs));
  const cap = Math.min(15 * 60_000, baseMs * 2 ** Math.max(0, attemptsMade - 1));
  return Math.floor(cap / 2 + random() * (cap / 2));
}
