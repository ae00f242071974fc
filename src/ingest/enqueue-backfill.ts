import type { Queue } from 'bullmq';
import type { Db } from '../db/connection.js';
import { doneCoverage, recordPlanned, unfinishedWindows } from '../db/partitions.js';
import { upsertStream } from '../db/streams.js';
import type { EarthquakeFilters } from '../domain/filters.js';
import type { Interval } from '../domain/interval.js';
import { LIMITS, type Operation } from '../domain/spec.js';
import { earthquakeStream, indicatorStream } from '../domain/streams.js';
import { planChunks } from '../planning/chunks.js';
import { planWindows } from '../planning/windows.js';
import { earthquakeWork, indicatorWork, type PlannedWork } from '../planning/work.js';
import { enqueueJobs } from '../queue/enqueue.js';
import { ATTR, inSpan } from '../telemetry/tracing.js';

export interface EnqueueSummary {
  streamKey: string;
  planned: number;
  added: number;
  alreadyQueued: number;
  partitionKeys: string[];
}

async function enqueueWork<T>(
  db: Db,
  queue: Queue,
  streamKey: string,
  work: PlannedWork<T>[],
  refresh: boolean,
  backfillId: string | null,
): Promise<EnqueueSummary> {
  await recordPlanned(
    db,
    work.map((w) => ({ ...w.partition, backfillId })),
    refresh,
  );
  const result = await enqueueJobs(
    queue,
    work.map((w) => w.job),
  );
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
  windows?: Interval[];
  /** The `backfills` row the partitions belong to (its control and budget apply); none for scheduled runs. */
  backfillId?: string | null;
}

/**
 * One span per enqueue, `backfill enqueue`: the jobs it adds carry its context, so each job's span,
 * and the gateway calls and statements beneath, sit under it in one trace.
 */
function enqueueSpan<T extends EnqueueSummary | EnqueueSummary[]>(
  operation: Operation,
  b: { refresh: boolean; backfillId?: string | null },
  enqueue: () => Promise<T>,
): Promise<T> {
  const attributes = { [ATTR.operation]: operation, [ATTR.refresh]: b.refresh };
  return inSpan('backfill enqueue', { attributes }, async (span) => {
    if (b.backfillId) span.setAttribute(ATTR.backfillId, b.backfillId);
    const result = await enqueue();
    const summaries: EnqueueSummary[] = Array.isArray(result) ? result : [result];
    const total = (count: (s: EnqueueSummary) => number) => summaries.reduce((n, s) => n + count(s), 0);
    span.setAttributes({
      [ATTR.planned]: total((s) => s.planned),
      [ATTR.added]: total((s) => s.added),
      [ATTR.alreadyQueued]: total((s) => s.alreadyQueued),
    });
    if (summaries.length === 1) span.setAttribute(ATTR.streamKey, summaries[0]!.streamKey);
    return result;
  });
}

export function enqueueEarthquakeBackfill(db: Db, queue: Queue, b: EarthquakeBackfill): Promise<EnqueueSummary> {
  return enqueueSpan('earthquake', b, () => enqueueEarthquake(db, queue, b));
}

async function enqueueEarthquake(db: Db, queue: Queue, b: EarthquakeBackfill): Promise<EnqueueSummary> {
  const stream = earthquakeStream(b.filters);
  await upsertStream(db, stream, b.streamName ?? null);
  const covered = b.refresh ? [] : (await doneCoverage(db, stream.streamKey)).windows;
  // Unfinished windows of the stream (an older version's shape included) are taken over, not read twice.
  const adopted = b.refresh || b.windows ? [] : await unfinishedWindows(db, stream.streamKey, b.fromMs, b.toMs);
  const windows = b.windows ?? [
    ...adopted,
    ...planWindows({ fromMs: b.fromMs, toMs: b.toMs, coveredMs: [...covered, ...adopted] }),
  ];
  return enqueueWork(
    db,
    queue,
    stream.streamKey,
    earthquakeWork(stream, b.filters, windows),
    b.refresh || b.windows !== undefined,
    b.backfillId ?? null,
  );
}

export interface IndicatorBackfill {
  indicators: string[];
  countries: string[];
  fromYear: number;
  toYear: number;
  refresh: boolean;
  streamName?: string | null;
  backfillId?: string | null;
}

export function enqueueIndicatorBackfill(db: Db, queue: Queue, b: IndicatorBackfill): Promise<EnqueueSummary[]> {
  return enqueueSpan('indicator', b, () => enqueueIndicators(db, queue, b));
}

async function enqueueIndicators(db: Db, queue: Queue, b: IndicatorBackfill): Promise<EnqueueSummary[]> {
  const out: EnqueueSummary[] = [];
  for (const indicator of b.indicators) {
    for (const country of b.countries) {
      const stream = indicatorStream({ indicator, country });
      await upsertStream(db, stream, b.streamName ?? null);
      const covered = b.refresh ? [] : (await doneCoverage(db, stream.streamKey)).years;
      const chunks = planChunks({
        fromYear: b.fromYear,
        toYear: b.toYear,
        maxYears: LIMITS.maxYearSpan,
        coveredYears: covered,
      });
      out.push(
        await enqueueWork(
          db,
          queue,
          stream.streamKey,
          indicatorWork(stream, { indicator, country }, chunks),
          b.refresh,
          b.backfillId ?? null,
        ),
      );
    }
  }
  return out;
}
