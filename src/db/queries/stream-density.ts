/**
 * How many stored events match a stream's filters, per day: what `check-config` projects a stream's
 * billed calls from. Read-only; deleted events are not counted (the catalog no longer has them).
 */
import { sql, type SQL } from 'drizzle-orm';
import { openDb, type DbHandle, type Db } from '../connection.js';
import { matchesFilters } from '../earthquake-events.js';
import type { EarthquakeFilters } from '../../domain/filters.js';

/** The sample ends on the day of the newest matching event and spans at most this many days. */
export const DENSITY_SAMPLE_DAYS = 30;
import { DENSITY_CONNECT_TIMEOUT_MS } from './density-limits.js';

export { DENSITY_CONNECT_TIMEOUT_MS };
/** A circle cannot use an index, so on a large table the count may scan it: bounded, it is only advice. */
export const DENSITY_QUERY_TIMEOUT_MS = 10_000;

/** Matching events stored over whole UTC days, both ends included. */
export interface StoredDensitySample {
  events: number;
  days: number;
}

/**
 * A one-connection handle with short timeouts, for advisory reads such as check-config's densities.
 * Not `openDb`: that one waits 5 s for a server, as commands that need the database should.
 */
export function openDensityReader(url: string): DbHandle {
  return openDb(url, {
    max: 1,
    connectTimeoutMs: DENSITY_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: DENSITY_QUERY_TIMEOUT_MS,
  });
}

/** The stream's stored events the catalog still has (the one filter rule of db/earthquake-events.ts). */
export function storedOfStream(f: EarthquakeFilters): SQL {
  return sql`e.deleted_at is null and ${matchesFilters(f)}`;
}

interface Row extends Record<string, unknown> {
  events: number;
  days: number;
}

/**
 * The density sample of one stream, or null when no stored event matches its filters. The sample
 * is the last days that have data: from the day of the newest matching event back 30 days, but
 * not before the day of the oldest one, so a stream stored for a week is not diluted over a month.
 * Days are UTC days; max and min run as separate subqueries so each can walk the time index.
 */
export async function storedDensitySample(db: Db, filters: EarthquakeFilters): Promise<StoredDensitySample | null> {
  const where = storedOfStream(filters);
  const result = await db.execute<Row>(sql`
    with bounds as (
      select (select max(e.time) from earthquake_events e where ${where}) as newest,
             (select min(e.time) from earthquake_events e where ${where}) as oldest
    ), sample as (
      select newest, date_trunc('day', newest, 'UTC') as last_day,
        -- hours, not days: day arithmetic on timestamptz would follow the session's daylight saving
        greatest(date_trunc('day', oldest, 'UTC'),
                 date_trunc('day', newest, 'UTC') - interval '1 hour' * ${(DENSITY_SAMPLE_DAYS - 1) * 24}::int)
          as first_day
      from bounds where newest is not null
    )
    select (select count(*) from earthquake_events e
        where ${where} and e.time >= s.first_day and e.time <= s.newest)::int as events,
      (extract(epoch from s.last_day - s.first_day) / 86400)::int + 1 as days
    from sample s`);
  const row = result.rows[0];
  return row === undefined ? null : { events: row.events, days: row.days };
}
