/**
 * Audit retention: audit rows (gateway_executions) older than AUDIT_RETENTION_DAYS are added to
 * gateway_cost_rollup, per UTC day, operation and stream, and deleted, in one statement per batch:
 * the rows a batch deletes are exactly the rows it adds, so nothing is counted twice or lost, even
 * with several service replicas at it (a row another replica deleted first is simply not returned).
 *
 * A batch takes whole (day, operation, stream) groups of the oldest day left, never part of one,
 * because gateway_cost_daily reads a group from the roll-up alone once the roll-up has it. The
 * cutoff is a UTC midnight for the same reason: a day is rolled up whole or not at all.
 */
import { sql } from 'drizzle-orm';
import { DAY_MS } from '../domain/time.js';
import type { Db } from './connection.js';

/** Pure: the UTC midnight `days` days before `nowMs`; rows that started before it are past retention. */
export function retentionCutoff(nowMs: number, days: number): Date {
  const midnight = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return new Date(midnight - days * DAY_MS);
}

export interface RollupBatch {
  /** Audit rows rolled up and deleted. */
  rows: number;
  /** Roll-up rows written or added to. */
  groups: number;
}

/**
 * One batch: whole groups of the oldest day before `cutoff`, about `maxRows` rows (a single larger
 * group is taken whole). `{ rows: 0 }` when nothing is past retention.
 */
export async function rollUpBatch(db: Db, cutoff: Date, maxRows: number): Promise<RollupBatch> {
  const result = await db.execute<{ rows: number; groups: number }>(sql`
    with oldest as (
      select (min(started_at) at time zone 'UTC')::date as day from gateway_executions where started_at < ${cutoff}
    ), span as (
      select (o.day::timestamp at time zone 'UTC') as lo,
        least(${cutoff}::timestamptz, ((o.day + 1)::timestamp at time zone 'UTC')) as hi
      from oldest o where o.day is not null
    ), groups as (
      select x.operation, coalesce(x.stream_key, '') as stream_key, count(*) as n
      from gateway_executions x, span s
      where x.started_at >= s.lo and x.started_at < s.hi
      group by 1, 2
    ), picked as (
      select g.operation, g.stream_key from (
        select operation, stream_key,
          sum(n) over (order by operation, stream_key) as running,
          row_number() over (order by operation, stream_key) as rn
        from groups
      ) g
      where g.running <= ${maxRows} or g.rn = 1
    ), doomed as (
      delete from gateway_executions x
      using span s, picked k
      where x.started_at >= s.lo and x.started_at < s.hi
        and x.operation = k.operation and coalesce(x.stream_key, '') = k.stream_key
      returning x.started_at, x.operation, coalesce(x.stream_key, '') as stream_key, x.billed, x.units, x.error_kind
    ), by_kind as (
      select (started_at at time zone 'UTC')::date as day, operation, stream_key, error_kind,
        count(*) as calls,
        count(*) filter (where billed) as billed_calls,
        count(*) filter (where billed is null) as billed_unknown,
        coalesce(sum(units) filter (where billed), 0) as units
      from doomed group by 1, 2, 3, 4
    ), totals as (
      select day, operation, stream_key,
        sum(calls)::int as calls, sum(billed_calls)::int as billed_calls, sum(billed_unknown)::int as billed_unknown,
        sum(units)::float8 as units,
        coalesce(jsonb_object_agg(error_kind, calls) filter (where error_kind is not null), '{}'::jsonb)
          as failures_by_kind
      from by_kind group by 1, 2, 3
    ), merged as (
      insert into gateway_cost_rollup as r
        (day, operation, stream_key, calls, billed_calls, billed_unknown, units, failures_by_kind)
      select day, operation, stream_key, calls, billed_calls, billed_unknown, units, failures_by_kind from totals
      on conflict (day, operation, stream_key) do update set
        calls = r.calls + excluded.calls,
        billed_calls = r.billed_calls + excluded.billed_calls,
        billed_unknown = r.billed_unknown + excluded.billed_unknown,
        units = r.units + excluded.units,
        failures_by_kind = (
          select coalesce(jsonb_object_agg(k.key, k.calls), '{}'::jsonb)
          from (
            select e.key, sum(e.value::numeric)::int as calls
            from (select * from jsonb_each_text(r.failures_by_kind)
              union all select * from jsonb_each_text(excluded.failures_by_kind)) e
            group by e.key
          ) k
        )
      returning 1
    )
    select (select count(*) from doomed)::int as rows, (select count(*) from merged)::int as groups`);
  const row = result.rows[0];
  return { rows: row?.rows ?? 0, groups: row?.groups ?? 0 };
}
