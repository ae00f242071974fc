import type { Queue } from 'bullmq';
import type { Db } from '../db/connection.js';
import { donePartitions, recordPlannedPartitions } from '../db/writes/partitions.js';
import { upsertStream } from '../db/writes/streams.js';
import { earthquakeStream, indicatorStream, type EarthquakeFilters } from '../domain/streams.js';
import { LIMITS } from '../gateway/schemas.js';
import { planChunks } from '../planning/chunks.js';
import type { Interval } from '../planning/intervals.js';
import { earthquakeWork, indicatorWork, type PlannedWork } from '../planning/partitions.js';
import { planWindows, type TimeWindow } from '../planning/windows.js';
import { enqueueJobs } from '../queue/enqueue.js';

export interface EnqueueSummary {
  streamKey: string;
  planned: number;
  added: number;
  alreadyQueued: number;
  partitionKeys: string[];
}

async function enqueueWork<T>(db: Db, queue: Queue, streamKey: string, work: PlannedWork<T>[], refresh: boolean): Promise<EnqueueSummary> {
  await recordPlannedPartitions(db, work.map((w) => w.partition), refresh);
  const result = await enqueueJobs(queue, work.map((w) => w.job));
  return {
    streamKey,
    planned: work.length,
    added: result.added.length,
    alreadyQueued: result.alreadyQueued.length,
    partitionKeys: work.map((w) => w.partition.partitionKey),
  };
}

export interface EarthquakeBackfill {
  filters: EarthquakeFilters;
  fromMs: number;
  toMs: number;
  refresh: boolean;
  streamName?: string | null;
  /** Scheduled runs re-read their lookback whatever was done before. */
  windows?: TimeWindow[];
}

export async function enqueueEarthquakeBackfill(db: Db, queue: Queue, b: EarthquakeBackfill): Promise<EnqueueSummary> {
  const stream = earthquakeStream(b.filters);
  await upsertStream(db, stream, b.streamName ?? null);
  const covered: Interval[] = b.refresh
    ? []
    : (await donePartitions(db, [stream.streamKey])).flatMap((p) =>
        p.windowStart && p.windowEnd ? [{ start: p.windowStart.getTime(), end: p.windowEnd.getTime() }] : [],
      );
  const windows = b.windows ?? planWindows({ fromMs: b.fromMs, toMs: b.toMs, coveredMs: covered });
  return enqueueWork(db, queue, stream.streamKey, earthquakeWork(stream, b.filters, windows), b.refresh || b.windows !== undefined);
}

export interface IndicatorBackfill {
  indicators: string[];
  countries: string[];
  fromYear: number;
  toYear: number;
  refresh: boolean;
  streamName?: string | null;
}

export async function enqueueIndicatorBackfill(db: Db, queue: Queue, b: IndicatorBackfill): Promise<EnqueueSummary[]> {
  const out: EnqueueSummary[] = [];
  for (const indicator of b.indicators) {
    for (const country of b.countries) {
      const stream = indicatorStream({ indicator, country });
      await upsertStream(db, stream, b.streamName ?? null);
      const covered: Interval[] = b.refresh
        ? []
        : (await donePartitions(db, [stream.streamKey])).flatMap((p) =>
            p.startYear !== null && p.endYear !== null ? [{ start: p.startYear, end: p.endYear }] : [],
          );
      const chunks = planChunks({ fromYear: b.fromYear, toYear: b.toYear, maxYears: LIMITS.maxYearSpan, coveredYears: covered });
      out.push(await enqueueWork(db, queue, stream.streamKey, indicatorWork(stream, { indicator, country }, chunks), b.refresh));
    }
  }
  return out;
}
