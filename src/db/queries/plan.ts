/**
 * Reads for `plan` / `backfill --dry-run`: what is stored about event density, what done windows
 * cost, how fast the gateway answers. Read-only: planning never writes.
 */
import { and, eq, inArray, isNotNull, sql, type SQL } from 'drizzle-orm';
import * as z from 'zod';
import type { EarthquakeFilters } from '../../domain/filters.js';
import type { Interval } from '../../domain/interval.js';
import { PARTITION_STATE } from '../../domain/partition.js';
import { SUCCEEDED, type Operation } from '../../domain/spec.js';
import { earthquakeStream, earthquakeStreamParamsSchema, filtersOfParams } from '../../domain/streams.js';
import { dayCover, eventsCover } from '../../domain/day-cover.js';
import type { Db } from '../connection.js';
import { gatewayExecutions as x, ingestPartitions as p, ingestStreams } from '../schema.js';
import { storedOfStream } from './stream-density.js';

/** `call_purpose` of the calls `--sample` pays for (ingest/sample.ts), read back by later plans. */
export const SAMPLE_PURPOSE = 'sample';
/** `call_purpose` of cap probes (worker/gateway-facts.ts): paid once per gateway, not per window. */
const CAP_PROBE_PURPOSE = 'cap-probe';

export interface StoredEarthquakeStream {
  streamKey: string;
  filters: EarthquakeFilters;
}

/** Every earthquake stream with its filters; rows whose params do not parse are left out. */
export async function earthquakeStreams(db: Db): Promise<StoredEarthquakeStream[]> {
  const rows = await db
    .select({ streamKey: ingestStreams.streamKey, params: ingestStreams.params })
    .from(ingestStreams)
    .where(eq(ingestStreams.operation, 'earthquake'));
  return rows.flatMap((r) => {
    const parsed = earthquakeStreamParamsSchema.safeParse(r.params);
    return parsed.success ? [{ streamKey: r.streamKey, filters: filtersOfParams(parsed.data) }] : [];
  });
}

export interface DoneWindow {
  streamKey: string;
  partitionKey: string;
  window: Interval;
  /** Billed calls and units spent on the window, its cap probes left out. */
  billedCalls: number;
  units: number;
}

/** Done windows of the given streams, with what they cost. */
export async function doneWindows(db: Db, streamKeys: readonly string[]): Promise<DoneWindow[]> {
  if (streamKeys.length === 0) return [];
  const keys = [...streamKeys];
  const rows = await db
    .select({
      streamKey: p.streamKey,
      partitionKey: p.partitionKey,
      start: p.windowStart,
      end: p.windowEnd,
      billedCalls: p.billedCalls,
      units: p.units,
    })
    .from(p)
    .where(
      and(
        inArray(p.streamKey, keys),
        eq(p.state, PARTITION_STATE.done),
        isNotNull(p.windowStart),
        isNotNull(p.windowEnd),
      ),
    );
  // A probe is booked on the window that happened to need it; it is estimated on its own.
  const probes = await db
    .select({
      streamKey: x.streamKey,
      partitionKey: x.partitionKey,
      billed: sql<number>`count(*) filter (where ${x.billed})::int`,
      units: sql<number>`coalesce(sum(${x.units}) filter (where ${x.billed}), 0)::float8`,
    })
    .from(x)
    .where(and(inArray(x.streamKey, keys), eq(x.callPurpose, CAP_PROBE_PURPOSE)))
    .groupBy(x.streamKey, x.partitionKey);
  const probeOf = new Map(probes.map((r) => [`${r.streamKey}\u0000${r.partitionKey}`, r]));
  return rows.map((r) => {
    const probe = probeOf.get(`${r.streamKey}\u0000${r.partitionKey}`);
    return {
      streamKey: r.streamKey,
      partitionKey: r.partitionKey,
      window: { startMs: r.start!.getTime(), endMs: r.end!.getTime() },
      billedCalls: Math.max(0, r.billedCalls - (probe?.billed ?? 0)),
      units: Math.max(0, r.units - (probe?.units ?? 0)),
    };
  });
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** One interval's counting plan (domain/day-cover.ts) as a row of the counting query; null: no such edge. */
function coverRow(i: number, w: Interval, byDays: boolean) {
  const c = byDays ? dayCover(w) : eventsCover(w);
  return {
    i,
    d1: iso(c.daysFromMs),
    d2: iso(c.daysToMs),
    as1: iso(c.addStart?.fromMs),
    as2: iso(c.addStart?.toMs),
    ss1: iso(c.subtractStart?.fromMs),
    ss2: iso(c.subtractStart?.toMs),
    ae1: iso(c.addEnd?.fromMs),
    ae2: iso(c.addEnd?.toMs),
    se1: iso(c.subtractEnd?.fromMs),
    se2: iso(c.subtractEnd?.toMs),
  };
}

/**
 * Stored events matching `filters` in each interval (both ends included), in the intervals' order.
 * For a stream that exists, whole UTC days come from its maintained day counts and only edges of
 * at most half a day from the events: a window costs a few index probes, not a scan of its events.
 */
export async function countEvents(
  db: Db,
  filters: EarthquakeFilters,
  intervals: readonly Interval[],
): Promise<number[]> {
  if (intervals.length === 0) return [];
  const { streamKey } = earthquakeStream(filters);
  const known = await db
    .select({ k: ingestStreams.streamKey })
    .from(ingestStreams)
    .where(eq(ingestStreams.streamKey, streamKey));
  const rows = JSON.stringify(intervals.map((w, i) => coverRow(i, w, known.length > 0)));
  const stored = storedOfStream(filters);
  const events = (range: SQL) => sql`(select count(*) from earthquake_events e where ${range} and ${stored})`;
  const result = await db.execute<{ n: number }>(sql`
    select (${events(sql`q.as1 is not null and e.time >= q.as1 and e.time < q.as2`)}
      - ${events(sql`q.ss1 is not null and e.time >= q.ss1 and e.time < q.ss2`)}
      + ${events(sql`q.ae1 is not null and e.time >= q.ae1 and e.time <= q.ae2`)}
      - ${events(sql`q.se1 is not null and e.time > q.se1 and e.time < q.se2`)}
      + coalesce((select sum(d.events) from earthquake_stream_days d where d.stream_key = ${streamKey}
          and d.day >= (q.d1 at time zone 'UTC')::date and d.day < (q.d2 at time zone 'UTC')::date), 0))::int as n
    from json_to_recordset(${rows}::json) as q(i int, d1 timestamptz, d2 timestamptz, as1 timestamptz,
      as2 timestamptz, ss1 timestamptz, ss2 timestamptz, ae1 timestamptz, ae2 timestamptz, se1 timestamptz,
      se2 timestamptz)
    order by q.i`);
  return result.rows.map((r) => r.n);
}

/** Median duration of the latest succeeded calls of an operation, or null when none is recorded. */
export async function medianLatencyMs(db: Db, operation: Operation, recent = 200): Promise<number | null> {
  const result = await db.execute<{ ms: number | null }>(sql`
    select percentile_cont(0.5) within group (order by t.duration_ms)::float8 as ms
    from (select ${x.durationMs} as duration_ms from ${x}
          where ${x.operation} = ${operation} and ${x.outcome} = ${SUCCEEDED} and ${x.durationMs} is not null
          order by ${x.startedAt} desc limit ${recent}) t`);
  return result.rows[0]?.ms ?? null;
}

/**
 * Median time from one call of a partition to its next, over recent worker calls: what a window's
 * sequence of calls really takes per call (latency, the answer transaction, lanes), backoff gaps
 * (a minute or more) left out. null when no partition made two calls.
 */
export async function medianCallCycleMs(db: Db, operation: Operation, recent = 1_000): Promise<number | null> {
  const result = await db.execute<{ ms: number | null }>(sql`
    select percentile_cont(0.5) within group (order by g.gap_ms)::float8 as ms
    from (
      select extract(epoch from r.started_at
          - lag(r.started_at) over (partition by r.stream_key, r.partition_key order by r.started_at)) * 1000 as gap_ms
      from (select ${x.streamKey} as stream_key, ${x.partitionKey} as partition_key, ${x.startedAt} as started_at
            from ${x}
            where ${x.operation} = ${operation} and ${x.partitionKey} is not null
              and ${x.callPurpose} is distinct from ${SAMPLE_PURPOSE}
            order by ${x.startedAt} desc limit ${recent}) r
    ) g
    where g.gap_ms > 0 and g.gap_ms < 60000`);
  return result.rows[0]?.ms ?? null;
}

const sampleRequestSchema = z.object({ start_time: z.string(), end_time: z.string() });

export interface SampleAnswer {
  interval: Interval;
  events: number;
  /** The answer came back full: the interval holds at least `events`. */
  full: boolean;
}

/** Answers of earlier `--sample` calls for this stream, from the audit (their units are the events returned). */
export async function sampleAnswers(db: Db, streamKey: string): Promise<SampleAnswer[]> {
  const rows = await db
    .select({ request: x.request, units: x.units, truncated: x.truncated })
    .from(x)
    .where(
      and(
        eq(x.streamKey, streamKey),
        eq(x.callPurpose, SAMPLE_PURPOSE),
        eq(x.outcome, SUCCEEDED),
        sql`${x.errorKind} is null`,
      ),
    );
  return rows.flatMap((r) => {
    const req = sampleRequestSchema.safeParse(r.request);
    if (!req.success || r.units === null) return [];
    const startMs = Date.parse(req.data.start_time);
    const endMs = Date.parse(req.data.end_time);
    if (!Number.isFinite(startMs) || !(endMs > startMs)) return [];
    return [{ interval: { startMs, endMs }, events: r.units, full: r.truncated === true }];
  });
}

/**
 * Over the chunks of recent succeeded indicator calls: points billed per year of a chunk, and calls
 * per chunk (a gateway leaving years out of its answers is asked for them again, and those calls'
 * points and years belong to the chunk's); each null when none is recorded.
 */
export async function indicatorHistory(
  db: Db,
  recent = 200,
): Promise<{ pointsPerYear: number | null; callsPerChunk: number | null }> {
  const result = await db.execute<{ ratio: number | null; per_chunk: number | null }>(sql`
    select sum(c.units)::float8 / nullif(sum(c.years), 0)::float8 as ratio,
      sum(c.calls)::float8 / nullif(count(*), 0)::float8 as per_chunk
    from (select sum(t.units) as units, max(t.years) as years, count(*) as calls
          from (select ${x.units} as units, ${x.streamKey} as stream, ${x.partitionKey} as chunk,
                  ((${x.request} ->> 'end_year')::int - (${x.request} ->> 'start_year')::int + 1) as years
                from ${x}
                where ${x.operation} = 'indicator' and ${x.outcome} = ${SUCCEEDED} and ${x.units} is not null
                  and ${x.request} ->> 'start_year' is not null and ${x.request} ->> 'end_year' is not null
                order by ${x.startedAt} desc limit ${recent}) t
          group by t.stream, t.chunk) c`);
  const row = result.rows[0];
  return { pointsPerYear: row?.ratio ?? null, callsPerChunk: row?.per_chunk ?? null };
}
