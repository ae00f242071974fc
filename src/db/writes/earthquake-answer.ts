import { sql } from 'drizzle-orm';
import type { AttemptRecord } from '../../gateway/attempt.js';
import type { EarthquakeEvent } from '../../gateway/schemas.js';
import type { Db, Tx } from '../connection.js';
import { earthquakeEvents } from '../schema.js';
import { recordAnswer, type CallContext, type PartitionProgress } from './audit.js';

/** Row mapping, pure. Duplicate ids in one answer collapse (one INSERT may not touch a row twice). */
export function eventRows(events: EarthquakeEvent[], seenAt: Date, executionRowId: number) {
  const byId = new Map<string, EarthquakeEvent>();
  for (const e of events) byId.set(e.id, e);
  return [...byId.values()].map((e) => ({
    id: e.id,
    time: new Date(e.time),
    magnitude: e.magnitude,
    magnitudeType: e.magnitude_type,
    place: e.place,
    latitude: e.latitude,
    longitude: e.longitude,
    depthKm: e.depth_km,
    tsunamiFlag: e.tsunami_flag,
    url: e.url,
    firstSeenAt: seenAt,
    lastSeenAt: seenAt,
    revisedAt: null,
    lastExecutionId: executionRowId,
  }));
}

const t = earthquakeEvents;
const fields = sql`(${t.time}, ${t.magnitude}, ${t.magnitudeType}, ${t.place}, ${t.latitude}, ${t.longitude}, ${t.depthKm}, ${t.tsunamiFlag}, ${t.url})`;
const incoming = sql`(excluded.time, excluded.magnitude, excluded.magnitude_type, excluded.place, excluded.latitude, excluded.longitude, excluded.depth_km, excluded.tsunami_flag, excluded.url)`;

/** Multi-row upsert; catalog revisions update the row and stamp `revised_at`. Returns rows inserted or revised. */
export async function upsertEvents(tx: Tx, rows: ReturnType<typeof eventRows>): Promise<number> {
  if (rows.length === 0) return 0;
  const changed = await tx
    .insert(t)
    .values(rows)
    .onConflictDoUpdate({
      target: t.id,
      set: {
        time: sql`excluded.time`,
        magnitude: sql`excluded.magnitude`,
        magnitudeType: sql`excluded.magnitude_type`,
        place: sql`excluded.place`,
        latitude: sql`excluded.latitude`,
        longitude: sql`excluded.longitude`,
        depthKm: sql`excluded.depth_km`,
        tsunamiFlag: sql`excluded.tsunami_flag`,
        url: sql`excluded.url`,
        lastSeenAt: sql`excluded.last_seen_at`,
        lastExecutionId: sql`excluded.last_execution_id`,
        revisedAt: sql`case when ${fields} is distinct from ${incoming} then excluded.last_seen_at else ${t.revisedAt} end`,
      },
    })
    .returning({ written: sql<boolean>`(xmax = 0) or ${t.revisedAt} = ${t.lastSeenAt}` });
  return changed.filter((r) => r.written).length;
}

/** One answer: audit row, events and window progress in one transaction. */
export async function recordEarthquakeAnswer(
  db: Db,
  record: AttemptRecord,
  ctx: CallContext,
  events: EarthquakeEvent[],
  truncated: boolean,
  progress: Omit<PartitionProgress, 'rowsWritten'>,
): Promise<{ executionRowId: number; rowsWritten: number }> {
  return recordAnswer(db, record, ctx, truncated, (tx, id) => upsertEvents(tx, eventRows(events, record.finishedAt, id)), progress);
}
