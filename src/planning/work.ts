/**
 * Partitions as queue work, pure: each planned window or year chunk becomes a partition row and a
 * job with a deterministic id. The job payloads are persisted (in Redis) and validated when taken
 * off the queue, so their schemas live here, beside the code that produces them.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import {
  earthquakeFiltersSchema,
  indicatorSeriesSchema,
  type EarthquakeFilters,
  type IndicatorSeries,
} from '../domain/filters.js';
import type { Interval } from '../domain/interval.js';
import type { PlannedPartition, StoredPartition } from '../domain/partition.js';
import type { Operation } from '../domain/spec.js';
import {
  earthquakeStreamParamsSchema,
  filtersOfParams,
  indicatorStreamParamsSchema,
  type StreamIdentity,
} from '../domain/streams.js';
import { chunkKey, type YearChunk } from './chunks.js';
import { windowKey } from './windows.js';

const partitionFields = { streamKey: z.string().min(1), partitionKey: z.string().min(1) };

export const earthquakeWindowJobSchema = z.strictObject({
  ...partitionFields,
  windowStartMs: z.number().int(),
  windowEndMs: z.number().int(),
  filters: earthquakeFiltersSchema,
});
export type EarthquakeWindowJob = z.infer<typeof earthquakeWindowJobSchema>;

export const indicatorChunkJobSchema = z.strictObject({
  ...partitionFields,
  ...indicatorSeriesSchema.shape,
  startYear: z.number().int(),
  endYear: z.number().int(),
});
export type IndicatorChunkJob = z.infer<typeof indicatorChunkJobSchema>;

export interface PlannedWork<T> {
  partition: PlannedPartition;
  job: { jobId: string; data: T };
}

/** Deterministic, so enqueueing the same partition twice never doubles the work. */
export function partitionJobId(operation: Operation, streamKey: string, partitionKey: string): string {
  const stream = createHash('sha256').update(streamKey).digest('hex').slice(0, 16);
  const part = partitionKey.replace(/[^A-Za-z0-9]+/g, '');
  return `${operation}-${stream}-${part}`;
}

/** Windows of one stream as partitions and their jobs. */
export function earthquakeWork(
  stream: StreamIdentity,
  filters: EarthquakeFilters,
  windows: Interval[],
  keyOf: (w: Interval, i: number) => string = windowKey,
): PlannedWork<EarthquakeWindowJob>[] {
  return windows.map((w, i) => {
    const partitionKey = keyOf(w, i);
    const jobId = partitionJobId('earthquake', stream.streamKey, partitionKey);
    return {
      partition: {
        streamKey: stream.streamKey,
        partitionKey,
        operation: 'earthquake',
        windowStart: new Date(w.startMs),
        windowEnd: new Date(w.endMs),
        jobId,
      },
      job: {
        jobId,
        data: { streamKey: stream.streamKey, partitionKey, windowStartMs: w.startMs, windowEndMs: w.endMs, filters },
      },
    };
  });
}

/** Year chunks of one (indicator, country) series as partitions and their jobs. */
export function indicatorWork(
  stream: StreamIdentity,
  series: IndicatorSeries,
  chunks: YearChunk[],
): PlannedWork<IndicatorChunkJob>[] {
  return chunks.map((c) => {
    const partitionKey = chunkKey(c);
    const jobId = partitionJobId('indicator', stream.streamKey, partitionKey);
    return {
      partition: {
        streamKey: stream.streamKey,
        partitionKey,
        operation: 'indicator',
        startYear: c.startYear,
        endYear: c.endYear,
        jobId,
      },
      job: {
        jobId,
        data: { streamKey: stream.streamKey, partitionKey, ...series, startYear: c.startYear, endYear: c.endYear },
      },
    };
  });
}

export type RebuiltJob =
  | { operation: 'earthquake'; job: { jobId: string; data: EarthquakeWindowJob } }
  | { operation: 'indicator'; job: { jobId: string; data: IndicatorChunkJob } };

/**
 * The job of a stored partition, exactly as planning made it (same id, same payload), so that work
 * lost from Redis is queued again from PostgreSQL alone. `null` when the row cannot make one.
 */
export function jobOfPartition(p: StoredPartition): RebuiltJob | null {
  const { streamKey, partitionKey } = p;
  if (p.operation === 'earthquake') {
    const params = earthquakeStreamParamsSchema.safeParse(p.params);
    if (!params.success || !p.windowStart || !p.windowEnd) return null;
    const data = {
      streamKey,
      partitionKey,
      windowStartMs: p.windowStart.getTime(),
      windowEndMs: p.windowEnd.getTime(),
      filters: filtersOfParams(params.data),
    };
    return { operation: 'earthquake', job: { jobId: partitionJobId('earthquake', streamKey, partitionKey), data } };
  }
  if (p.operation === 'indicator') {
    const series = indicatorStreamParamsSchema.safeParse(p.params);
    if (!series.success || p.startYear === null || p.endYear === null) return null;
    const data = { streamKey, partitionKey, ...series.data, startYear: p.startYear, endYear: p.endYear };
    return { operation: 'indicator', job: { jobId: partitionJobId('indicator', streamKey, partitionKey), data } };
  }
  return null;
}

/**
 * The partition key of a scheduled re-read: one slot per tier and window of its band, reused by
 * every tick (its window moves with the clock), so a stream's partition rows stay bounded.
 */
export function refreshSlotKey(tier: number, slot: number): string {
  return `refresh-tier${tier}-${slot}`;
}
