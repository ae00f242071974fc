import { sql } from 'drizzle-orm';
import type { Interval } from '../../planning/intervals.js';
import type { Db } from '../connection.js';

export interface StreamFreshness {
  /** Earthquake streams: the newest event last written by one of the stream's own calls. */
  newestEventTime: Date | null;
  /** Indicator series: the last year holding a value. */
  lastValueYear: number | null;
  /** Done windows (epoch ms, both ends inclusive), merged and sorted. */
  doneWindows: Interval[];
  /** Done year chunks, merged and sorted. */
  doneYears: Interval[];
}

interface Row extends Record<string, unknown> {
  stream_key: string;
  newest_event_time: Date | string | null;
  last_value_year: number | null;
  done_windows: Array<[number, number]> | null;
  done_years: Array<[number, number]> | null;
}

const toIntervals = (pairs: Array<[number, number]> | null): Interval[] =>
  (pairs ?? []).map(([start, end]) => ({ start: Math.round(start), end: Math.round(end) }));

/**
 * Per stream key. Done partitions are merged in Postgres (range_agg), so a stream with years of
 * scheduled runs sends back a handful of ranges rather than every window it ever fetched.
 */
export async function streamFreshness(db: Db): Promise<Map<string, StreamFreshness>> {
  const result = await db.execute<Row>(sql`
    with done as (
      select stream_key,
        range_agg(tstzrange(window_start, window_end, '[]')) filter (where window_start is not null) as windows,
        range_agg(int4range(start_year, end_year, '[]')) filter (where start_year is not null) as years
      from ingest_partitions where state = 'done' group by stream_key
    )
    select s.stream_key,
      (select e.time from earthquake_events e join gateway_executions g on g.id = e.last_execution_id
        where s.operation = 'earthquake' and g.stream_key = s.stream_key order by e.time desc limit 1) as newest_event_time,
      (select max(v.year) from indicator_values v
        where s.operation = 'indicator' and v.value is not null and v.indicator_id = s.params ->> 'indicator'
          and v.country_id = coalesce(
            (select a.country_id from country_code_aliases a where a.requested_code = s.params ->> 'country'),
            s.params ->> 'country'))::int as last_value_year,
      (select jsonb_agg(jsonb_build_array(extract(epoch from lower(r)) * 1000, extract(epoch from upper(r)) * 1000) order by lower(r))
        from unnest(d.windows) r) as done_windows,
      (select jsonb_agg(jsonb_build_array(lower(r), upper(r) - 1) order by lower(r)) from unnest(d.years) r) as done_years
    from ingest_streams s left join done d using (stream_key)`);
  return new Map(
    result.rows.map((r) => [
      r.stream_key,
      {
        newestEventTime: r.newest_event_time === null ? null : new Date(r.newest_event_time),
        lastValueYear: r.last_value_year,
        doneWindows: toIntervals(r.done_windows),
        doneYears: toIntervals(r.done_years),
      },
    ]),
  );
}
