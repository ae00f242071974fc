import { sql } from 'drizzle-orm';
import type { Db } from '../connection.js';
import { fromRange, type Interval } from '../../domain/interval.js';
import type { Range } from '../../domain/ranges.js';

export interface StreamFreshness {
  /** Earthquake streams: the newest stored event the stream's filters match (not marked deleted). */
  newestEventTime: Date | null;
  /** Indicator series: the last year holding a value. */
  lastValueYear: number | null;
  /** What was proven complete (coverage_proofs), merged and sorted: earthquake streams. */
  doneWindows: Interval[];
  /** The same for indicator streams, in years. */
  doneYears: Range[];
  /** Earthquake streams: what backfills asked for (their windows, scheduled re-reads left out), merged and sorted. */
  askedWindows: Interval[];
  /** Each part of the range and when it was last proven complete (epoch ms or years), sorted. */
  proven: Array<{ lo: number; hi: number; provenAt: Date }>;
  /** Earthquake streams: stored events matching the stream's filters marked deleted, and revised in the last day. */
  deletedEvents: number;
  revisedLastDay: number;
}

/** Over `ingest_streams s` and its `q` row (`NEWEST_DAY`): the day of the newest event, then that day's events. */
const NEWEST_EVENT_TIME = sql.raw(`(select max(e.time) from earthquake_events e
        where e.time >= (q.newest_day::timestamp at time zone 'UTC')
          and e.time < ((q.newest_day + 1)::timestamp at time zone 'UTC')
          and e.deleted_at is null and gi_stream_keeps(s.params, e.magnitude, e.latitude, e.longitude))
        as newest_event_time`);

/** Over `ingest_streams s`: the last year of an indicator series holding a value. */
const LAST_VALUE_YEAR = sql.raw(`(select max(v.year) from indicator_values v
        where s.operation = 'indicator' and v.value is not null and v.indicator_id = coalesce(
            (select a.indicator_id from indicator_code_aliases a where a.requested_code = s.params ->> 'indicator'),
            s.params ->> 'indicator')
          and v.country_id = coalesce(
            (select a.country_id from country_code_aliases a where a.requested_code = s.params ->> 'country'),
            s.params ->> 'country'))::int as last_value_year`);

/**
 * Over `ingest_streams s`: the newest day holding events of the stream, a backward step along the
 * day counts' key (days whose events were all deleted are skipped, and are few).
 */
const NEWEST_DAY = sql.raw(`left join lateral (select sd.day as newest_day from earthquake_stream_days sd
  where sd.stream_key = s.stream_key and sd.events > 0 order by sd.day desc limit 1) q on true`);

/** Over `ingest_streams s`: its deleted events, from the days with deletions (a partial index keeps those). */
const DELETED_EVENTS = sql.raw(`(select sum(sd.deleted) from earthquake_stream_days sd
  where sd.stream_key = s.stream_key and sd.deleted > 0)::int as deleted_events`);

interface Row extends Record<string, unknown> {
  stream_key: string;
  newest_event_time: Date | string | null;
  last_value_year: number | null;
  done_windows: Array<[number, number]> | null;
  done_years: Array<[number, number]> | null;
  asked_windows: Array<[number, number]> | null;
  proven: Array<{ lo: number; hi: number; provenAt: string }> | null;
  deleted_events: number | null;
  revised_last_day: number | null;
}

const toRanges = (pairs: Array<[number, number]> | null): Range[] =>
  (pairs ?? []).map(([start, end]) => ({ start: Math.round(start), end: Math.round(end) }));

/**
 * Per stream key. Coverage is what was proven complete (coverage_proofs, merged in Postgres), so
 * a window being read again still counts as covered. Deletions and the newest event come from the
 * maintained per-stream day counts (earthquake_stream_days), revisions from the index on
 * `revised_at`: lookups whatever the size of the events table.
 */
export async function streamFreshness(db: Db): Promise<Map<string, StreamFreshness>> {
  const result = await db.execute<Row>(sql`
    with done as (
      select p.stream_key,
        range_agg(tstzrange(to_timestamp(p.lo / 1000.0), to_timestamp(p.hi / 1000.0), '[]'))
          filter (where s.operation = 'earthquake') as windows,
        range_agg(int4range(p.lo::int, p.hi::int, '[]')) filter (where s.operation = 'indicator') as years,
        jsonb_agg(jsonb_build_object('lo', p.lo, 'hi', p.hi, 'provenAt', p.proven_at) order by p.lo) as proven
      from coverage_proofs p join ingest_streams s using (stream_key) group by p.stream_key
    ), asked as (
      select stream_key, range_agg(tstzrange(window_start, window_end, '[]')) as windows
      from ingest_partitions
      where window_start is not null and window_end is not null and partition_key not like 'refresh-%'
      group by stream_key
    )
    select s.stream_key,
      ${NEWEST_EVENT_TIME},
      (select count(*) from earthquake_events e
        where s.operation = 'earthquake' and e.revised_at > now() - interval '1 day' and e.deleted_at is null
          and gi_stream_keeps(s.params, e.magnitude, e.latitude, e.longitude))::int as revised_last_day,
      ${LAST_VALUE_YEAR},
      (select jsonb_agg(jsonb_build_array(extract(epoch from lower(r)) * 1000, extract(epoch from upper(r)) * 1000)
          order by lower(r))
        from unnest(d.windows) r) as done_windows,
      (select jsonb_agg(jsonb_build_array(lower(r), upper(r) - 1) order by lower(r))
        from unnest(d.years) r) as done_years,
      (select jsonb_agg(jsonb_build_array(extract(epoch from lower(r)) * 1000, extract(epoch from upper(r)) * 1000)
          order by lower(r))
        from unnest(a.windows) r) as asked_windows,
      d.proven, ${DELETED_EVENTS}
    from ingest_streams s left join done d using (stream_key) left join asked a using (stream_key) ${NEWEST_DAY}`);
  return new Map(
    result.rows.map((r) => [
      r.stream_key,
      {
        newestEventTime: r.newest_event_time === null ? null : new Date(r.newest_event_time),
        lastValueYear: r.last_value_year,
        doneWindows: toRanges(r.done_windows).map(fromRange),
        doneYears: toRanges(r.done_years),
        askedWindows: toRanges(r.asked_windows).map(fromRange),
        proven: (r.proven ?? []).map((x) => ({ lo: Number(x.lo), hi: Number(x.hi), provenAt: new Date(x.provenAt) })),
        deletedEvents: r.deleted_events ?? 0,
        revisedLastDay: r.revised_last_day ?? 0,
      },
    ]),
  );
}

/**
 * Per stream key, when its newest data is (what /metrics shows on every scrape): lookups in the
 * maintained day counts and indexes, none of the coverage and history `streamFreshness` reads.
 */
export async function streamNewestData(
  db: Db,
): Promise<Map<string, Pick<StreamFreshness, 'newestEventTime' | 'lastValueYear'>>> {
  const result = await db.execute<Pick<Row, 'stream_key' | 'newest_event_time' | 'last_value_year'>>(sql`
    select s.stream_key, ${NEWEST_EVENT_TIME}, ${LAST_VALUE_YEAR}
    from ingest_streams s ${NEWEST_DAY}`);
  return new Map(
    result.rows.map((r) => [
      r.stream_key,
      {
        newestEventTime: r.newest_event_time === null ? null : new Date(r.newest_event_time),
        lastValueYear: r.last_value_year,
      },
    ]),
  );
}
