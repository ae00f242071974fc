import { and, getTableName, inArray, isNull, lt, param, sql, type SQL } from 'drizzle-orm';
import { EARTH_RADIUS_KM } from '../domain/geo.js';
import { magnitudeFloor, type EarthquakeFilters } from '../domain/filters.js';
import { reportedPrecisionMs } from '../domain/time.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { EarthquakeEvent } from '../gateway/schemas.js';
import type { Db, Tx } from './connection.js';
import { earthquakeEvents, earthquakeRevisions } from './schema.js';
import { commitAnswer } from './answers.js';
import { auditCompletion, completion, type CallContext } from './audit.js';
import { callRecord, callTally, type Progress } from './partitions.js';
import { prepared, renderer, slot, slots } from './prepared.js';

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
    fullId: e.full_id ?? null,
    firstSeenAt: seenAt,
    lastSeenAt: seenAt,
    revisedAt: null,
    lastExecutionId: executionRowId,
  }));
}

const t = earthquakeEvents;
type EventRow = ReturnType<typeof eventRows>[number];

/**
 * The catalog fields compared between a stored event and an answer, as `old` and `incoming` rows
 * hold them: a revision row per field that differs, its values as JSON (a time as toISOString
 * writes it, so that BI reads one format whatever wrote the row).
 */
const REVISED: ReadonlyArray<[field: string, value: (row: string) => string]> = [
  ['time', (r) => `to_jsonb(to_char(${r}.time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`],
  ...['magnitude', 'magnitude_type', 'place', 'latitude', 'longitude', 'depth_km', 'tsunami_flag', 'url'].map(
    (f): [string, (row: string) => string] => [f, (r) => `to_jsonb(${r}.${f})`],
  ),
];

/** A stored row's catalog fields in the gateway's wire shape (a time as toISOString writes it). */
export function wireShape(r: Pick<EventRow, WireField> & { fullId?: string | null }): EarthquakeEvent {
  const shape: EarthquakeEvent = {
    id: r.id,
    time: r.time.toISOString(),
    magnitude: r.magnitude,
    magnitude_type: r.magnitudeType,
    place: r.place,
    latitude: r.latitude,
    longitude: r.longitude,
    depth_km: r.depthKm,
    tsunami_flag: r.tsunamiFlag,
    url: r.url,
  };
  if (r.fullId != null) shape.full_id = r.fullId;
  return shape;
}
type WireField =
  | 'id'
  | 'time'
  | 'magnitude'
  | 'magnitudeType'
  | 'place'
  | 'latitude'
  | 'longitude'
  | 'depthKm'
  | 'tsunamiFlag'
  | 'url';

/**
 * The rows as one JSON array in the wire shape, keyed by column: one string built natively, where
 * ten array parameters were each serialised element by element by the driver (a quarter of a
 * worker's allocations). Numbers are written shortest-round-trip and read back as the same float8.
 */
function incomingJson(rows: readonly EventRow[]): string {
  return JSON.stringify(rows.map(wireShape));
}

/**
 * Everything of the upsert after `incoming` and `params`, as text built once: it has no values of
 * its own, and drizzle would otherwise render its many pieces again for every answer.
 */
const UPSERT_REST = (() => {
  const t = `"${getTableName(earthquakeEvents)}"`;
  const revisions = `"${getTableName(earthquakeRevisions)}"`;
  const changed = REVISED.map(([field, value]) => `('${field}'::text, ${value('o')}, ${value('i')})`).join(', ');
  return `old as (
      select e.id, e.time, e.magnitude, e.magnitude_type, e.place, e.latitude, e.longitude, e.depth_km, e.tsunami_flag,
        e.url, e.deleted_at
      from ${t} e where e.id in (select id from incoming)
    ),
    upserted as (
      insert into ${t} (id, time, magnitude, magnitude_type, place, latitude, longitude, depth_km, tsunami_flag, url,
        full_id, first_seen_at, last_seen_at, revised_at, last_execution_id)
      select i.*, p.seen, p.seen, null, p.execution_id from incoming i cross join params p order by i.id
      on conflict (id) do update set
        time = excluded.time, magnitude = excluded.magnitude, magnitude_type = excluded.magnitude_type,
        place = excluded.place, latitude = excluded.latitude, longitude = excluded.longitude,
        depth_km = excluded.depth_km, tsunami_flag = excluded.tsunami_flag, url = excluded.url,
        full_id = excluded.full_id,
        last_seen_at = excluded.last_seen_at, last_execution_id = excluded.last_execution_id,
        revised_at = case when (${t}.time, ${t}.magnitude, ${t}.magnitude_type, ${t}.place, ${t}.latitude,
          ${t}.longitude, ${t}.depth_km, ${t}.tsunami_flag, ${t}.url) is distinct from (excluded.time,
          excluded.magnitude, excluded.magnitude_type, excluded.place, excluded.latitude, excluded.longitude,
          excluded.depth_km, excluded.tsunami_flag, excluded.url)
          then excluded.last_seen_at else ${t}.revised_at end,
        deleted_at = null, deleted_execution_id = null
    ),
    revs as (
      insert into ${revisions} (event_id, field, old_value, new_value, execution_id, revised_at)
      select o.id, c.field, c.old_value, c.new_value, p.execution_id, p.seen
      from old o join incoming i on i.id = o.id cross join params p
      cross join lateral (values ${changed},
        ('deleted'::text,
          to_jsonb(to_char(o.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), null::jsonb))
        as c(field, old_value, new_value)
      where case when c.field = 'deleted' then o.deleted_at is not null
        else c.old_value is distinct from c.new_value end
      returning event_id
    ),
    counts as (
      select (select count(*) from incoming) - (select count(*) from old)
        + (select count(distinct event_id) from revs) as n
    )`;
})();

/**
 * The upsert of an answer's rows as common table expressions, ending in `counts` (rows inserted or
 * revised): `old` holds the stored versions of the rows it names (the statement's snapshot, before
 * `upserted` writes), `revs` the history rows of what changed, a restored event (marked deleted,
 * back in an answer) included. One statement whatever the answer's size: the rows travel as one JSON
 * parameter (`incoming`, the wire shape), not as 200 rows of bound values each.
 */
function upsertCtes(incoming: SQL, executionId: SQL, seen: SQL): SQL {
  return sql`incoming as (
      select * from json_to_recordset(${incoming}::json)
        as u(id text, time timestamptz, magnitude float8, magnitude_type text, place text, latitude float8,
          longitude float8, depth_km float8, tsunami_flag boolean, url text, full_id text)
    ),
    params as (select ${seen}::timestamptz as seen, ${executionId}::bigint as execution_id),
    ${sql.raw(UPSERT_REST)}`;
}

/**
 * Multi-row upsert: catalog revisions update the row, stamp `revised_at` and add history rows; an
 * event marked deleted that comes back is restored. One statement. Returns rows inserted or revised.
 */
export async function upsertEvents(
  tx: Tx | Db,
  rows: readonly EventRow[],
  executionId: number | null = null,
): Promise<number> {
  if (rows.length === 0) return 0;
  const ctes = upsertCtes(
    sql`${param(incomingJson(rows))}`,
    sql`${executionId}`,
    sql`${rows[0]!.lastSeenAt.toISOString()}`,
  );
  const result = await tx.execute<{ n: string | number }>(sql`with ${ctes} select n from counts`);
  return Number(result.rows[0]?.n ?? 0);
}

/** As toISOString writes a time: such a time is stored as it came, any other is written so first. */
function isCanonicalTime(t: string): boolean {
  return t.length === 24 && t.charCodeAt(10) === 84 && t.charCodeAt(19) === 46 && t.charCodeAt(23) === 90;
}

/**
 * An answer's events as the upsert's JSON parameter, straight from the validated answer. When no
 * id repeats and every time is written as toISOString writes it (the usual answer), the events are
 * serialised as they are, with no row built in between; otherwise through `eventRows` (whose seen
 * time and execution the wire shape leaves out).
 */
export function answerJson(events: EarthquakeEvent[]): string {
  const ids = new Set<string>();
  for (const e of events) {
    if (ids.has(e.id) || !isCanonicalTime(e.time)) return incomingJson(eventRows(events, new Date(0), 0));
    ids.add(e.id);
  }
  return JSON.stringify(events);
}

const AUDIT_SLOTS = [
  'request',
  'httpStatus',
  'code',
  'message',
  'outcome',
  'billed',
  'units',
  'executionId',
  'invocationId',
  'errorKind',
  'errorDetail',
  'truncated',
  'startedAt',
  'finishedAt',
  'durationMs',
] as const;

type AnswerValues = Record<(typeof AUDIT_SLOTS)[number], unknown> & {
  attemptId: number;
  incoming: string;
  streamKey: string;
  partitionKey: string;
  billedCalls: number;
  tallyUnits: number;
  frontier: string;
  at: Date;
};

/**
 * One answer: its events upserted with their history, its audit row completed and the window's
 * progress (frontier) recorded, in one statement: atomic by itself, one round trip, prepared once.
 */
const RECORD_ANSWER = prepared<AnswerValues>(() => {
  const attemptId = sql`${slot('attemptId')}::bigint`;
  const written = sql`(select n from counts)::int`;
  const audit = { ...slots(AUDIT_SLOTS), request: sql`${slot('request')}::jsonb`, rowsWritten: written };
  const ref = { streamKey: slot('streamKey'), partitionKey: slot('partitionKey') };
  const tally = { billedCalls: slot('billedCalls'), units: slot('tallyUnits'), errorKind: null, errorDetail: null };
  const progress = { frontier: sql`${slot('frontier')}::jsonb`, finish: null, rowsWritten: written };
  return sql`
    with ${upsertCtes(slot('incoming'), attemptId, slot('finishedAt'))},
    audit as (${completion(renderer, attemptId, audit).getSQL()}),
    progress as (${callRecord(renderer, ref, tally, progress, slot('at')).getSQL()})
    -- Every part of a WITH runs once, read or not: the audit row and the progress are written.
    select n from counts`;
});

export async function recordEarthquakeAnswer(
  db: Db,
  attemptId: number,
  record: AttemptRecord,
  ctx: CallContext,
  events: EarthquakeEvent[],
  truncated: boolean,
  progress: Omit<Progress, 'rowsWritten' | 'finish'>,
): Promise<{ executionRowId: number; rowsWritten: number }> {
  const { rowsWritten: _, ...audit } = auditCompletion(record, truncated);
  const tally = callTally(record);
  const [row] = await RECORD_ANSWER.rows<{ n: string | number }>(db, {
    ...audit,
    request: JSON.stringify(audit.request),
    attemptId,
    incoming: answerJson(events),
    streamKey: ctx.streamKey,
    partitionKey: ctx.partitionKey,
    billedCalls: tally.billedCalls,
    tallyUnits: tally.units,
    frontier: JSON.stringify(progress.frontier),
    at: new Date(),
  });
  return { executionRowId: attemptId, rowsWritten: Number(row?.n ?? 0) };
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
      + cos(radians(${lat}::float8)) * cos(radians(e.latitude))
        * power(sin(radians(e.longitude - ${lon}::float8) / 2), 2)))) <= ${radiusKm}::float8`);
  }
  return sql.join(parts, sql` and `);
}

/**
 * Stored events of the stream (not marked deleted) surely inside `region` (their reported time
 * give or take its precision, `reportedPrecisionMs`) and outside the `excluded` regions, that no
 * answer returned since `seenSince`: what a proven-complete re-read started then should have
 * returned but did not.
 */
export async function deletionCandidates(
  db: Db,
  q: {
    filters: EarthquakeFilters;
    region: { lo: number; hi: number };
    excluded: ReadonlyArray<{ lo: number; hi: number }>;
    seenSince: Date;
  },
): Promise<Array<{ id: string; timeMs: number }>> {
  const result = await db.execute<{ id: string; time: Date | string }>(sql`
    select e.id, e.time from earthquake_events e
    where e.deleted_at is null
      and e.time > ${new Date(q.region.lo).toISOString()}::timestamptz
      and e.time < ${new Date(q.region.hi).toISOString()}::timestamptz
      and e.last_seen_at < ${q.seenSince.toISOString()}::timestamptz and ${matchesFilters(q.filters)}`);
  const candidates = result.rows.map((r) => ({ id: r.id, timeMs: new Date(r.time).getTime() }));
  return candidates.filter(({ timeMs }) => {
    const precisionMs = reportedPrecisionMs([timeMs]);
    const inside = timeMs - precisionMs >= q.region.lo && timeMs + precisionMs <= q.region.hi;
    return inside && !q.excluded.some((r) => timeMs + precisionMs > r.lo && timeMs - precisionMs < r.hi);
  });
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
