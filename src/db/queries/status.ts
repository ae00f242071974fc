import { sql } from 'drizzle-orm';
import { BACKFILL_BUDGET_DAY } from '../../domain/budget.js';
import { PARTITION_STATE as S } from '../../domain/partition.js';
import type { Db } from '../connection.js';

export interface StreamStatus {
  streamKey: string;
  operation: string;
  name: string | null;
  params: unknown;
  partitions: { done: number; pending: number; running: number; partial: number; failed: number };
  rowsWritten: number;
  calls: number;
  billedCalls: number;
  /** Calls whose answer was never recorded (a crash, a kill, a cut-off): the gateway may have billed them. */
  billedUnknown: number;
  units: number;
  billedCallsToday: number;
  unitsToday: number;
  lastSuccessAt: Date | null;
  lastError: string | null;
  lastErrorKind: string | null;
  failedPartitions: Array<{ partitionKey: string; error: string | null; kind: string | null }>;
  /** Windows done except intervals no query could resolve (epoch ms, open intervals). */
  partialPartitions: Array<{ partitionKey: string; unresolved: Array<{ lo: number; hi: number }> }>;
}

/** A stream with nothing recorded yet: every count zero, no success, no error. */
export function emptyStreamStatus(streamKey: string, operation: string, name: string | null = null): StreamStatus {
  return {
    streamKey,
    operation,
    name,
    params: null,
    partitions: { done: 0, pending: 0, running: 0, partial: 0, failed: 0 },
    rowsWritten: 0,
    calls: 0,
    billedCalls: 0,
    billedUnknown: 0,
    units: 0,
    billedCallsToday: 0,
    unitsToday: 0,
    lastSuccessAt: null,
    lastError: null,
    lastErrorKind: null,
    failedPartitions: [],
    partialPartitions: [],
  };
}

interface Row extends Record<string, unknown> {
  stream_key: string;
  operation: string;
  name: string | null;
  params: unknown;
  done: number;
  pending: number;
  running: number;
  partial: number;
  failed: number;
  rows_written: number;
  calls: number;
  billed_calls: number;
  billed_unknown: number;
  units: number;
  billed_today: number;
  units_today: number;
  last_success_at: Date | string | null;
  last_error: string | null;
  last_error_kind: string | null;
  failed_list: Array<{ partitionKey: string; error: string | null; kind: string | null }> | null;
  partial_list: Array<{ partitionKey: string; unresolved: Array<{ lo: number; hi: number }> | null }> | null;
}

/** Per stream: partition states, audited calls and money, and what failed. */
export async function streamStatus(db: Db): Promise<StreamStatus[]> {
  const result = await db.execute<Row>(sql`
    with parts as (
      select stream_key,
        count(*) filter (where state = ${S.done})::int as done,
        count(*) filter (where state = ${S.pending})::int as pending,
        count(*) filter (where state = ${S.running})::int as running,
        count(*) filter (where state = ${S.partial})::int as partial,
        count(*) filter (where state = ${S.failed})::int as failed,
        coalesce(sum(rows_written), 0)::int as rows_written,
        max(completed_at) as last_success_at,
        (jsonb_agg(jsonb_build_object('partitionKey', partition_key, 'error', last_error, 'kind', last_error_kind)
           order by window_start nulls last, start_year nulls last, partition_key)
           filter (where state = ${S.failed})) as failed_list,
        (jsonb_agg(jsonb_build_object('partitionKey', partition_key, 'unresolved', frontier -> 'unresolved')
           order by window_start nulls last, start_year nulls last, partition_key)
           filter (where state = ${S.partial})) as partial_list,
        (array_agg(last_error order by updated_at desc) filter (where state = ${S.failed}))[1] as newest_failure,
        (array_agg(last_error_kind order by updated_at desc) filter (where state = ${S.failed}))[1]
          as newest_failure_kind
      from ingest_partitions group by stream_key
    ), calls as (
      -- The maintained day counts of the audit rows kept (gateway_cost_days), not the rows themselves.
      select nullif(stream_key, '') as stream_key, sum(calls)::int as calls,
        sum(billed_calls)::int as billed_calls, sum(billed_unknown)::int as billed_unknown,
        coalesce(sum(units), 0)::float8 as units,
        coalesce(sum(billed_calls) filter (where day = (now() at time zone 'utc')::date), 0)::int as billed_today,
        coalesce(sum(units) filter (where day = (now() at time zone 'utc')::date), 0)::float8 as units_today
      from gateway_cost_days group by stream_key
    ), last_error as (
      select s.stream_key, x.error_detail as last_error, x.error_kind as last_error_kind
      from ingest_streams s cross join lateral (
        select x.error_detail, x.error_kind from gateway_executions x
        where x.stream_key = s.stream_key and x.error_kind is not null order by x.started_at desc limit 1) x
    )
    select s.stream_key, s.operation, s.name, s.params,
      coalesce(p.done, 0) as done, coalesce(p.pending, 0) as pending, coalesce(p.running, 0) as running,
      coalesce(p.partial, 0) as partial, coalesce(p.failed, 0) as failed, coalesce(p.rows_written, 0) as rows_written,
      coalesce(c.calls, 0) as calls, coalesce(c.billed_calls, 0) as billed_calls,
      coalesce(c.billed_unknown, 0) as billed_unknown, coalesce(c.units, 0) as units,
      coalesce(c.billed_today, 0) as billed_today, coalesce(c.units_today, 0) as units_today,
      p.last_success_at, coalesce(p.newest_failure, e.last_error) as last_error,
      coalesce(p.newest_failure_kind, e.last_error_kind) as last_error_kind, p.failed_list, p.partial_list
    from ingest_streams s
    left join parts p using (stream_key)
    left join calls c using (stream_key)
    left join last_error e using (stream_key)
    order by s.operation, s.stream_key`);
  return result.rows.map((r) => ({
    streamKey: r.stream_key,
    operation: r.operation,
    name: r.name,
    params: r.params,
    partitions: { done: r.done, pending: r.pending, running: r.running, partial: r.partial, failed: r.failed },
    rowsWritten: r.rows_written,
    calls: r.calls,
    billedCalls: r.billed_calls,
    billedUnknown: r.billed_unknown,
    units: r.units,
    billedCallsToday: r.billed_today,
    unitsToday: r.units_today,
    lastSuccessAt: r.last_success_at === null ? null : new Date(r.last_success_at),
    lastError: r.last_error,
    lastErrorKind: r.last_error_kind,
    failedPartitions: r.failed_list ?? [],
    partialPartitions: (r.partial_list ?? []).map((x) => ({
      partitionKey: x.partitionKey,
      unresolved: x.unresolved ?? [],
    })),
  }));
}

/** Unfinished partitions of one stream under one backfill (or none): what may hold them. */
export interface UnfinishedGroup {
  streamKey: string;
  backfillId: string | null;
  /** Null when the partition has no backfill (scheduled runs), or its row is gone. */
  control: string | null;
  maxBilledCalls: number | null;
  /** The backfill's budget counter. */
  budgetUsed: number;
  unfinished: number;
}

interface UnfinishedRow extends Record<string, unknown> {
  stream_key: string;
  backfill_id: string | null;
  control: string | null;
  max_billed_calls: number | null;
  budget_used: number;
  unfinished: number;
}

/** Pending and running partitions per stream and backfill, with the backfill's control and budget. */
export async function unfinishedByBackfill(db: Db): Promise<UnfinishedGroup[]> {
  const result = await db.execute<UnfinishedRow>(sql`
    select p.stream_key, p.backfill_id, b.control, b.max_billed_calls,
      coalesce(c.calls, 0)::int as budget_used, count(*)::int as unfinished
    from ingest_partitions p
    left join backfills b on b.id = p.backfill_id
    left join budget_counters c on c.scope = 'backfill:' || p.backfill_id and c.day = ${BACKFILL_BUDGET_DAY}::date
    where p.state in (${S.pending}, ${S.running})
    group by p.stream_key, p.backfill_id, b.control, b.max_billed_calls, c.calls
    order by p.stream_key, p.backfill_id`);
  return result.rows.map((r) => ({
    streamKey: r.stream_key,
    backfillId: r.backfill_id,
    control: r.control,
    maxBilledCalls: r.max_billed_calls,
    budgetUsed: r.budget_used,
    unfinished: r.unfinished,
  }));
}
