import { and, inArray, isNull, lt, param, sql, type SQL } from 'drizzle-orm';
import { EARTH_RADIUS_KM } from '../domain/geo.js';
import { magnitudeFloor, type EarthquakeFilters } from '../domain/filters.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { EarthquakeEvent } from '../gateway/schemas.js';
import type { Db, Tx } from './connection.js';
import { earthquakeEvents, earthquakeRevisions } from './schema.js';
import { commitAnswer } from './answers.js';
import type { CallContext } from './audit.js';
import type { Progress } from './partitions.js';

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

type EventRow = ReturnType<typeof eventRows>[number];
/** The catalog fields of an event, as compared between a stored row and an answer. */
const REVISED_FIELDS = [
  'time',
  'magnitude',
  'magnitudeType',
  'place',
  'latitude',
  'longitude',
  'depthKm',
  'tsunamiFlag',
  'url',
] as const;
type Stored = Pick<EventRow, (typeof REVISED_FIELDS)[number] | 'id'> & { deletedAt: Date | null };

export interface Revision {
  eventId: string;
  /** A column name (snake case, as BI sees it), or `deleted` for a restored event. */
  field: string;
  oldValue: unknown;
  newValue: unknown;
}

const json = (v: unknown): unknown => (v instanceof Date ? v.toISOString() : v);
const snake = (f: string) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Pure: what an answer changes of the events already stored (new events are not revisions). */
export function eventRevisions(stored: readonly Stored[], rows: readonly EventRow[]): Revision[] {
  const byId = new Map(stored.map((e) => [e.id, e]));
  return rows.flatMap((row) => {
    const old = byId.get(row.id);
    if (!old) return [];
    const changed: Revision[] = REVISED_FIELDS.filter((f) => json(old[f]) !== json(row[f])).map((f) => ({
      eventId: row.id,
      field: snake(f),
      oldValue: json(old[f]),
      newValue: json(row[f]),
    }));
    if (old.deletedAt)
      changed.push({ eventId: row.id, field: 'deleted', oldValue: old.deletedAt.toISOString(), newValue: null });
    return changed;
  });
}

/** The stored fields of the events an answer names: what its revisions are judged against. */
async function storedVersions(tx: Tx, ids: readonly string[]): Promise<Stored[]> {
  return tx
    .select({
      id: t.id,
      time: t.time,
      magnitude: t.magnitude,
      magnitudeType: t.magnitudeType,
      place: t.place,
      latitude: t.latitude,
      longitude: t.longitude,
      depthKm: t.depthKm,
      tsunamiFlag: t.tsunamiFlag,
      url: t.url,
      deletedAt: t.deletedAt,
    })
    .from(t)
    .where(sql`${t.id} = any(${param([...ids])}::text[])`);
}

/**
 * Multi-row upsert: catalog revisions update the row, stamp `revised_at` and add history rows; an
 * event marked deleted that comes back is restored. One statement whatever the answer's size: the
 * columns travel as ten array parameters (unnest), not as 200 rows of bound values each.
 * Returns rows inserted or revised.
 */
export async function upsertEvents(
  tx: Tx,
  rows: ReturnType<typeof eventRows>,
  executionId: number | null = null,
): Promise<number> {
  if (rows.length === 0) return 0;
  const stored = await storedVersions(
    tx,
    rows.map((r) => r.id),
  );
  const revisions = eventRevisions(stored, rows);
  const col = <K extends keyof EventRow>(k: K) => param(rows.map((r) => r[k]));
  const seenAt = rows[0]!.lastSeenAt.toISOString();
  await tx.execute(sql`
    insert into earthquake_events (id, time, magnitude, magnitude_type, place, latitude, longitude, depth_km, tsunami_flag, url,
      first_seen_at, last_seen_at, revised_at, last_execution_id)
    select u.*, ${seenAt}::timestamptz, ${seenAt}::timestamptz, null, ${rows[0]!.lastExecutionId}::bigint
    from unnest(${col('id')}::text[], ${param(rows.map((r) => r.time.toISOString()))}::timestamptz[], ${col('magnitude')}::float8[],
      ${col('magnitudeType')}::text[], ${col('place')}::text[], ${col('latitude')}::float8[], ${col('longitude')}::float8[],
      ${col('depthKm')}::float8[], ${col('tsunamiFlag')}::boolean[], ${col('url')}::text[])
      as u(id, time, magnitude, magnitude_type, place, latitude, longitude, depth_km, tsunami_flag, url)
    on conflict (id) do update set
      time = excluded.time, magnitude = excluded.magnitude, magnitude_type = excluded.magnitude_type, place = excluded.place,
      latitude = excluded.latitude, longitude = excluded.longitude, depth_km = excluded.depth_km,
      tsunami_flag = excluded.tsunami_flag, url = excluded.url,
      last_seen_at = excluded.last_seen_at, last_execution_id = excluded.last_execution_id,
      revised_at = case when ${fields} is distinct from ${incoming} then excluded.last_seen_at else ${t.revisedAt} end,
      deleted_at = null, deleted_execution_id = null`);
  if (revisions.length > 0) {
    await tx
      .insert(earthquakeRevisions)
      .values(revisions.map((r) => ({ ...r, executionId, revisedAt: rows[0]!.lastSeenAt })));
  }
  const revised = new Set(revisions.map((r) => r.eventId));
  return rows.length - stored.length + revised.size;
}

/** One answer: audit row, events and window progress in one transaction. */
export async function recordEarthquakeAnswer(
  db: Db,
  attemptId: number,
  record: AttemptRecord,
  ctx: CallContext,
  events: EarthquakeEvent[],
  truncated: boolean,
  progress: Omit<Progress, 'rowsWritten'>,
): Promise<{ executionRowId: number; rowsWritten: number }> {
  return commitAnswer(
    db,
    attemptId,
    record,
    ctx,
    truncated,
    (tx, id) => upsertEvents(tx, eventRows(events, record.finishedAt, id), id),
    progress,
  );
}

/**
 * The stream's filters over `earthquake_events e` (stored values), as the gateway applies them: an
 * event without a magnitude never passes a minimum; the circle is the haversine of domain/geo.ts.
 * Every query that asks "the stream's events" uses this one rule.
 */
export function matchesFilters(f: EarthquakeFilters): SQL {
  const parts = [sql`true`];
  if (f.minMagnitude !== null) parts.push(sql`e.magnitude >= ${magnitudeFloor(f.minMagnitude)}::float8`);
  if (f.circle !== null) {
    const { latitude: lat, longitude: lon, radiusKm } = f.circle;
    parts.push(sql`2 * ${EARTH_RADIUS_KM}::float8 * asin(least(1, sqrt(
      power(sin(radians(e.latitude - ${lat}::float8) / 2), 2)
      + cos(radians(${lat}::float8)) * cos(radians(e.latitude)) * power(sin(radians(e.longitude - ${lon}::float8) / 2), 2)))) <= ${radiusKm}::float8`);
  }
  return sql.join(parts, sql` and `);
}

/**
 * Stored events of the stream (not marked deleted) surely inside `region` (their reported time
 * give or take PRECISION_MS) and outside the `excluded` regions, that no answer returned since
 * `seenSince`: what a proven-complete re-read started then should have returned but did not.
 */
export async function deletionCandidates(
  db: Db,
  q: {
    filters: EarthquakeFilters;
    region: { lo: number; hi: number };
    excluded: ReadonlyArray<{ lo: number; hi: number }>;
    seenSince: Date;
    precisionMs: number;
  },
): Promise<Array<{ id: string; timeMs: number }>> {
  const from = new Date(q.region.lo + q.precisionMs);
  const to = new Date(q.region.hi - q.precisionMs);
  const result = await db.execute<{ id: string; time: Date | string }>(sql`
    select e.id, e.time from earthquake_events e
    where e.deleted_at is null and e.time >= ${from.toISOString()}::timestamptz and e.time <= ${to.toISOString()}::timestamptz
      and e.last_seen_at < ${q.seenSince.toISOString()}::timestamptz and ${matchesFilters(q.filters)}`);
  const rows = result.rows.map((r) => ({ id: r.id, time: new Date(r.time) }));
  const excluded = (ms: number) => q.excluded.some((r) => ms + q.precisionMs > r.lo && ms - q.precisionMs < r.hi);
  return rows.map((r) => ({ id: r.id, timeMs: r.time.getTime() })).filter((c) => !excluded(c.timeMs));
}

/**
 * Marks events deleted on the proof of execution `executionId`, with a history row each. Only
 * events still unseen since `seenSince` are marked: one seen meanwhile is in the catalog.
 */
export async function markDeleted(
  tx: Tx,
  ids: readonly string[],
  executionId: number,
  at: Date,
  seenSince: Date,
): Promise<number> {
  if (ids.length === 0) return 0;
  const marked = await tx
    .update(t)
    .set({ deletedAt: at, deletedExecutionId: executionId })
    .where(and(inArray(t.id, [...ids]), isNull(t.deletedAt), lt(t.lastSeenAt, seenSince)))
    .returning({ id: t.id });
  if (marked.length > 0) {
    await tx.insert(earthquakeRevisions).values(
      marked.map((m) => ({
        eventId: m.id,
        field: 'deleted',
        oldValue: null,
        newValue: at.toISOString(),
        executionId,
        revisedAt: at,
      })),
    );
  }
  return marked.length;
}

/** A deletion check's answer: audit row, the candidates it still holds updated, the absent ones marked. */
export async function recordDeletionCheck(
  db: Db,
  attemptId: number,
  record: AttemptRecord,
  ctx: CallContext,
  present: EarthquakeEvent[],
  absent: readonly string[],
  seenSince: Date,
): Promise<{ executionRowId: number; rowsWritten: number; marked: number }> {
  let marked = 0;
  const done = await commitAnswer(
    db,
    attemptId,
    record,
    ctx,
    null,
    async (tx, id) => {
      const revised = await upsertEvents(tx, eventRows(present, record.finishedAt, id), id);
      marked = await markDeleted(tx, absent, id, record.finishedAt, seenSince);
      return revised + marked;
    },
    'answered',
  );
  return { ...done, marked };
}

/** Times (epoch ms, ascending) of the stream's stored events inside [fromMs, toMs], not marked deleted. */
export async function storedEventTimes(
  db: Db,
  filters: EarthquakeFilters,
  fromMs: number,
  toMs: number,
): Promise<number[]> {
  const result = await db.execute<{ ms: string | number }>(sql`
    select (extract(epoch from e.time) * 1000)::float8 as ms from earthquake_events e
    where e.deleted_at is null and e.time >= ${new Date(fromMs).toISOString()}::timestamptz
      and e.time <= ${new Date(toMs).toISOString()}::timestamptz and ${matchesFilters(filters)}
    order by e.time`);
  return result.rows.map((r) => Math.round(Number(r.ms)));
}
