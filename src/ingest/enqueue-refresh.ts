/**
 * Scheduled re-reads (jobs.yaml ticks). Unlike a backfill they read done partitions again, but a
 * slot still pending or running from an earlier tick is left to finish rather than restarted:
 * restarting it would throw away the calls it already paid for.
 */
import type { Queue } from 'bullmq';
import type { Db } from '../db/connection.js';
import { inProgress, recordPlanned } from '../db/partitions.js';
import { upsertStream } from '../db/streams.js';
import type { EarthquakeFilters } from '../domain/filters.js';
import type { Interval } from '../domain/interval.js';
import { LIMITS } from '../domain/spec.js';
import { earthquakeStream, indicatorStream } from '../domain/streams.js';
import { planChunks } from '../planning/chunks.js';
import { earthquakeWork, indicatorWork, refreshSlotKey, type PlannedWork } from '../planning/work.js';
import { enqueueJobs } from '../queue/enqueue.js';

export interface RefreshSummary {
  streamKey: string;
  planned: number;
  added: number;
  /** Slots an earlier tick is still reading. */
  stillRunning: number;
}

async function enqueueFresh<T>(
  db: Db,
  queue: Queue,
  streamKey: string,
  work: PlannedWork<T>[],
): Promise<RefreshSummary> {
  const busy = await inProgress(
    db,
    streamKey,
    work.map((w) => w.partition.partitionKey),
  );
  const fresh = work.filter((w) => !busy.has(w.partition.partitionKey));
  await recordPlanned(
    db,
    fresh.map((w) => w.partition),
    true,
  );
  const result = await enqueueJobs(
    queue,
    fresh.map((w) => w.job),
  );
  return { streamKey, planned: fresh.length, added: result.added.length, stillRunning: busy.size };
}

/** One tier's band of an earthquake stream, in slots `refreshSlotKey(tier, i)`. */
export async function enqueueEarthquakeRefresh(
  db: Db,
  queue: Queue,
  r: { filters: EarthquakeFilters; streamName: string; tier: number; windows: Interval[] },
): Promise<RefreshSummary> {
  const stream = earthquakeStream(r.filters);
  await upsertStream(db, stream, r.streamName);
  return enqueueFresh(
    db,
    queue,
    stream.streamKey,
    earthquakeWork(stream, r.filters, r.windows, (_w, i) => refreshSlotKey(r.tier, i)),
  );
}

/** Every chunk of every series of an indicator stream (fixed chunk keys: already bounded). */
export async function enqueueIndicatorRefresh(
  db: Db,
  queue: Queue,
  r: { indicators: string[]; countries: string[]; fromYear: number; toYear: number; streamName: string },
): Promise<RefreshSummary[]> {
  const out: RefreshSummary[] = [];
  for (const indicator of r.indicators) {
    for (const country of r.countries) {
      const stream = indicatorStream({ indicator, country });
      await upsertStream(db, stream, r.streamName);
      const chunks = planChunks({ fromYear: r.fromYear, toYear: r.toYear, maxYears: LIMITS.maxYearSpan });
      out.push(await enqueueFresh(db, queue, stream.streamKey, indicatorWork(stream, { indicator, country }, chunks)));
    }
  }
  return out;
}
