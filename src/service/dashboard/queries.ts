/**
 * The status page's own reads (what src/db/queries does not already answer): coverage by partition
 * state, billed calls per UTC day, backfills with their budgets, and today's budget counter.
 * Every query aggregates in PostgreSQL, so years of scheduled runs cost a handful of rows.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { PARTITION_STATE, type PartitionState } from '../../domain/partition.js';
import type { Range } from '../../domain/ranges.js';

/** Merged ranges per state: epoch ms for windows, years for year chunks (both ends inclusive). */
export interface StateRanges {
  streamKey: string;
  state: PartitionState;
  windows: Range[];
  years: Range[];
}

interface StateRow extends Record<string, unknown> {
  stream_key: string;
  state: PartitionState;
  windows: Array<[number, number]> | null;
  years: Array<[number, number]> | null;
}

const toRanges = (pairs: Array<[number, number]> | null): Range[] =>
  (pairs ?? []).map(([start, end]) => ({ start: Math.round(start), end: Math.round(end) }));

export async function partitionRanges(db: Db): Promise<StateRanges[]> {
  const result = await db.execute<StateRow>(sql`
    with agg as (
      select stream_key, state,
        range_agg(tstzrange(window_start, window_end, '[]')) filter (where window_start is not null) as windows,
        range_agg(int4range(start_year, end_year, '[]')) filter (where start_year is not null) as years
      from ingest_partitions group by stream_key, state
    )
    select stream_key, state,
      (select jsonb_agg(jsonb_build_array(extract(epoch from lower(r)) * 1000,
          extract(epoch from upper(r)) * 1000) order by lower(r))
        from unnest(windows) r) as windows,
      (select jsonb_agg(jsonb_build_array(lower(r), upper(r) - 1) order by lower(r)) from unnest(years) r) as years
    from agg`);
  return result.rows.map((r) => ({
    streamKey: r.stream_key,
    state: r.state,
    windows: toRanges(r.windows),
    years: toRanges(r.years),
  }));
}

export interface DailyBilled {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  operation: string;
  billedCalls: number;
}

interface DailyRow extends Record<string, unknown> {
  day: string;
  operation: string;
  billed: number;
}

/**
 * Billed calls per UTC day and operation since `fromDay`. Audit rows past retention live on only in
 * gateway_cost_rollup; per (day, operation, stream) the larger of the two is taken, so a day whose
 * rows were rolled up but not yet deleted is not counted twice.
 */
export async function billedPerDay(db: Db, fromDay: string): Promise<DailyBilled[]> {
  const result = await db.execute<DailyRow>(sql`
    with audit as (
      -- The maintained day counts of the audit rows kept, not the rows themselves.
      select day, operation, stream_key, sum(billed_calls)::int as billed
      from gateway_cost_days where day >= ${fromDay}::date
      group by 1, 2, 3
    ), rollup as (
      select day, operation, stream_key, billed_calls as billed from gateway_cost_rollup where day >= ${fromDay}::date
    )
    select to_char(day, 'YYYY-MM-DD') as day, operation,
      sum(greatest(coalesce(a.billed, 0), coalesce(r.billed, 0)))::int as billed
    from audit a full join rollup r using (day, operation, stream_key)
    group by day, operation order by day, operation`);
  return result.rows.map((r) => ({ day: r.day, operation: r.operation, billedCalls: r.billed }));
}

export interface BackfillRow {
  id: string;
  operation: string;
  description: string;
  control: string;
  maxBilledCalls: number | null;
  billedCalls: number;
  partitions: { total: number; done: number; failed: number };
  createdAt: Date;
}

interface BackfillDbRow extends Record<string, unknown> {
  id: string;
  operation: string;
  description: string;
  control: string;
  max_billed_calls: number | null;
  billed_calls: number;
  total: number;
  done: number;
  failed: number;
  created_at: Date | string;
}

export const BACKFILLS_LISTED = 20;

/** Active and paused backfills first, then the newest; each with its billed calls and progress. */
export async function backfillsWithBudgets(db: Db): Promise<BackfillRow[]> {
  const result = await db.execute<BackfillDbRow>(sql`
    with listed as (
      select * from backfills order by (control = 'cancelled'), created_at desc limit ${BACKFILLS_LISTED}
    ), parts as (
      select backfill_id, count(*)::int as total,
        count(*) filter (where state = ${PARTITION_STATE.done})::int as done,
        count(*) filter (where state = ${PARTITION_STATE.failed})::int as failed
      from ingest_partitions where backfill_id in (select id from listed) group by backfill_id
    )
    select l.id, l.operation, l.description, l.control, l.max_billed_calls, l.created_at,
      coalesce(c.calls, 0)::int as billed_calls, coalesce(p.total, 0) as total,
      coalesce(p.done, 0) as done, coalesce(p.failed, 0) as failed
    from listed l
    left join budget_counters c on c.scope = 'backfill:' || l.id and c.day = '1970-01-01'
    left join parts p on p.backfill_id = l.id
    order by (l.control = 'cancelled'), l.created_at desc`);
  return result.rows.map((r) => ({
    id: r.id,
    operation: r.operation,
    description: r.description,
    control: r.control,
    maxBilledCalls: r.max_billed_calls,
    billedCalls: r.billed_calls,
    partitions: { total: r.total, done: r.done, failed: r.failed },
    createdAt: new Date(r.created_at),
  }));
}

/** Billed calls counted against BILLED_CALLS_PER_DAY on the UTC day `day` (YYYY-MM-DD). */
export async function dayBudgetUsed(db: Db, day: string): Promise<number> {
  const result = await db.execute<{ calls: number }>(sql`
    select coalesce(sum(calls), 0)::int as calls from budget_counters where scope = 'day' and day = ${day}::date`);
  return result.rows[0]?.calls ?? 0;
}

/** YYYY-MM-DD of the UTC day holding `ms`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The newest failed call of a stream, and the first success that came after it on the same partition. */
export interface ExecutionError {
  streamKey: string;
  partitionKey: string | null;
  error: string | null;
  kind: string;
  at: Date;
  /**
   * When a later answered call of the same partition (or the partition finishing) overcame it;
   * null while nothing has.
   */
  overcameAt: Date | null;
}

/**
 * A partition that failed and is being tried again: pending after it was planned again, or running
 * with failures in a row.
 */
export interface RetryingPartition {
  streamKey: string;
  partitionKey: string;
  error: string | null;
  kind: string | null;
  since: Date;
}

export interface StreamErrors {
  lastError: ExecutionError | null;
  retrying: number;
  /** The newest RETRYING_LISTED of them. */
  retryingListed: RetryingPartition[];
}

export const RETRYING_LISTED = 5;

interface ErrorRow extends Record<string, unknown> {
  stream_key: string;
  partition_key: string | null;
  error_detail: string | null;
  error_kind: string;
  started_at: Date | string;
  overcame_at: Date | string | null;
}

interface RetryingRow extends Record<string, unknown> {
  stream_key: string;
  retrying: number;
  listed: Array<{ partitionKey: string; error: string | null; kind: string | null; since: string }> | null;
}

const emptyErrors = (): StreamErrors => ({ lastError: null, retrying: 0, retryingListed: [] });

/**
 * Per stream key: its newest failed call with what overcame it, and its partitions being retried.
 * Whether an error is still current is decided from these (cards.ts), not here.
 */
export async function streamErrors(db: Db): Promise<Map<string, StreamErrors>> {
  const [errors, retrying] = await Promise.all([
    db.execute<ErrorRow>(sql`
      with newest as (
        select s.stream_key, x.partition_key, x.error_detail, x.error_kind, x.started_at
        from ingest_streams s cross join lateral (
          select x.partition_key, x.error_detail, x.error_kind, x.started_at from gateway_executions x
          where x.stream_key = s.stream_key and x.error_kind is not null order by x.started_at desc limit 1) x
      )
      select n.*, least(
        (select min(s.finished_at) from gateway_executions s
          where s.stream_key = n.stream_key and s.partition_key is not distinct from n.partition_key
            and s.started_at > n.started_at and s.error_kind is null and s.finished_at is not null),
        (select p.completed_at from ingest_partitions p
          where p.stream_key = n.stream_key and p.partition_key = n.partition_key
            and p.state in (${PARTITION_STATE.done}, ${PARTITION_STATE.partial}) and p.completed_at > n.started_at)
      ) as overcame_at
      from newest n`),
    db.execute<RetryingRow>(sql`
      with r as (
        select stream_key, partition_key, last_error, last_error_kind, updated_at,
          row_number() over (partition by stream_key order by updated_at desc, partition_key) as n
        from ingest_partitions
        where last_error is not null
          and (state = ${PARTITION_STATE.pending} or (state = ${PARTITION_STATE.running} and consecutive_failures > 0))
      )
      select stream_key, count(*)::int as retrying,
        jsonb_agg(jsonb_build_object('partitionKey', partition_key, 'error', last_error,
            'kind', last_error_kind, 'since', updated_at)
          order by n) filter (where n <= ${RETRYING_LISTED}) as listed
      from r group by stream_key`),
  ]);
  const out = new Map<string, StreamErrors>();
  const entry = (key: string): StreamErrors => {
    const e = out.get(key) ?? emptyErrors();
    out.set(key, e);
    return e;
  };
  for (const r of errors.rows)
    entry(r.stream_key).lastError = {
      streamKey: r.stream_key,
      partitionKey: r.partition_key,
      error: r.error_detail,
      kind: r.error_kind,
      at: new Date(r.started_at),
      overcameAt: r.overcame_at === null ? null : new Date(r.overcame_at),
    };
  for (const r of retrying.rows) {
    const e = entry(r.stream_key);
    e.retrying = r.retrying;
    e.retryingListed = (r.listed ?? []).map((x) => ({
      streamKey: r.stream_key,
      partitionKey: x.partitionKey,
      error: x.error,
      kind: x.kind,
      since: new Date(x.since),
    }));
  }
  return out;
}
