import type { PlannedPartition } from '../db/writes/partitions.js';
import type { EarthquakeFilters, StreamIdentity } from '../domain/streams.js';
import type { EarthquakeWindowJob, IndicatorChunkJob } from '../queue/payloads.js';
import { partitionJobId } from '../queue/queues.js';
import { chunkKey, type YearChunk } from './chunks.js';
import { windowKey, type TimeWindow } from './windows.js';

export interface PlannedWork<T> {
  partition: PlannedPartition;
  job: { jobId: string; data: T };
}

/** Pure: windows of one stream as partitions and their jobs. */
export function earthquakeWork(stream: StreamIdentity, filters: EarthquakeFilters, windows: TimeWindow[]): PlannedWork<EarthquakeWindowJob>[] {
  return windows.map((w) => {
    const partitionKey = windowKey(w);
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

/** Pure: year chunks of one (indicator, country) series as partitions and their jobs. */
export function indicatorWork(stream: StreamIdentity, series: { indicator: string; country: string }, chunks: YearChunk[]): PlannedWork<IndicatorChunkJob>[] {
  return chunks.map((c) => {
    const partitionKey = chunkKey(c);
    const jobId = partitionJobId('indicator', stream.streamKey, partitionKey);
    return {
      partition: { streamKey: stream.streamKey, partitionKey, operation: 'indicator', startYear: c.startYear, endYear: c.endYear, jobId },
      job: { jobId, data: { streamKey: stream.streamKey, partitionKey, ...series, startYear: c.startYear, endYear: c.endYear } },
    };
  });
}
