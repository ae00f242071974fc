/** What the demo prints at its end: the audit of its run, the strongest events and a population series. */
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../connection.js';

async function rows<T extends Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  return (await db.execute<T>(query)).rows as T[];
}

export interface CallsOfOperation {
  operation: string;
  calls: number;
  billed: number;
  units: number;
  failed: number;
}

/** Gateway calls started since `since`, per operation, from the audit table. */
export function callsSince(db: Db, since: Date): Promise<CallsOfOperation[]> {
  return rows<{ operation: string; calls: number; billed: number; units: number; failed: number }>(
    db,
    sql`
    select operation, count(*)::int as calls, count(*) filter (where billed)::int as billed,
      coalesce(sum(units) filter (where billed), 0)::float8 as units,
      count(*) filter (where error_kind is not null)::int as failed
    from gateway_executions where started_at >= ${since.toISOString()} group by operation order by operation`,
  );
}

export async function eventCount(db: Db): Promise<number> {
  const [row] = await rows<{ n: number }>(db, sql`select count(*)::int as n from earthquake_events`);
  return row?.n ?? 0;
}

export function strongestEvents(db: Db, limit: number): Promise<{ time: Date; magnitude: number; place: string }[]> {
  return rows(
    db,
    sql`select time, magnitude, place from earthquake_events order by magnitude desc nulls last limit ${limit}`,
  );
}

/**
 * Population of the United States and the World every ten years, up to the last year with a value
 * (later years come back null: the bundled World Bank files end in 2015).
 */
export function populationByDecade(db: Db): Promise<{ year: number; us: number | null; world: number | null }[]> {
  return rows(
    db,
    sql`
    select year, max(value) filter (where country_id = 'US') as us, max(value) filter (where country_id = '1W') as world
    from indicator_values where indicator_id = 'SP.POP.TOTL' and year % 10 = 0
      and year <= (select max(year) from indicator_values where indicator_id = 'SP.POP.TOTL' and value is not null)
    group by year order by year`,
  );
}
