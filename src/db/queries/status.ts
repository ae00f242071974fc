import { sql } from 'drizzle-orm';
import type { Db } from '../connection.js';

export interface StreamStatus {
  streamKey: string;
  operation: string;
  name: string | null;
  params: unknown;
  partitions: { done: number; pending: number; running: number; failed: number };
  rowsWritten: number;
  calls: number;
  billedCalls: number;
  units: number;
  billedCallsToday: number;
  unitsToday: number;
  lastSuccessAt: Date | null;
  lastError: string | null;
  lastErrorKind: string | null;
  failedPartitions: Array<{ partitionKey: string; error: string | null; kind: string | null }>;
}

interface Row extends Record<string, unknown> {
  stream_key: string;
  operation: string;
  name: string | null;
  params: unknown;
  done: number;
  pending: number;
  running: number;
  failed: number;
  rows_written: number;
  calls: number;
  billed_calls: number;
  units: number;
  billed_today: number;
  units_today: number;
  last_success_at: Date | string | null;
  last_error: string | null;
  last_error_kind: string | null;
  failed_list: Array<{ partitionKey: string; error: string | null; kind: string | null }> | null;
}

/** Per stream: partition states, audited calls and money, and what failed. */
export async function streamStatus(db: Db): Promise<StreamStatus[]> {
  const result = await db.execute<Row>(sql`
    with parts as (
      select stream_key,
        count(*) filter (where state = 'done')::int as done,
        count(*) filter (where state = 'pending')::int as pending,
        count(*) filter (where state = 'running')::int as running,
        count(*) filter (where state = 'failed')::int as failed,
        coalesce(sum(rows_written), 0)::int as rows_written,
        max(completed_at) as last_success_at,
        (jsonb_agg(jsonb_build_object('partitionKey', partition_key, 'error', last_error, 'kind', last_error_kind)
           order by updated_at desc) filter (where state = 'failed')) as failed_list
      from ingest_partitions group by stream_key
    ), calls as (
      select stream_key, count(*)::int as calls,
        count(*) filter (where billed)::int as billed_calls,
        coalesce(sum(units) filter (where billed), 0)::float8 as units,
        count(*) filter (where billed and started_at >= date_trunc('day', now()))::int as billed_today,
        coalesce(sum(units) filter (where billed and started_at >= date_trunc('day', now())), 0)::float8 as units_today
      from gateway_executions group by stream_key
    ), last_error as (
      select distinct on (stream_key) stream_key, error_detail as last_error, error_kind as last_error_kind
      from gateway_executions where error_kind is not null order by stream_key, started_at desc
    )
    select s.stream_key, s.operation, s.name, s.params,
      coalesce(p.done, 0) as done, coalesce(p.pending, 0) as pending, coalesce(p.running, 0) as running,
      coalesce(p.failed, 0) as failed, coalesce(p.rows_written, 0) as rows_written,
      coalesce(c.calls, 0) as calls, coalesce(c.billed_calls, 0) as billed_calls, coalesce(c.units, 0) as units,
      coalesce(c.billed_today, 0) as billed_today, coalesce(c.units_today, 0) as units_today,
      p.last_success_at, coalesce((p.failed_list -> 0 ->> 'error'), e.last_error) as last_error,
      coalesce((p.failed_list -> 0 ->> 'kind'), e.last_error_kind) as last_error_kind, p.failed_list
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
    partitions: { done: r.done, pending: r.pending, running: r.running, failed: r.failed },
    rowsWritten: r.rows_written,
    calls: r.calls,
    billedCalls: r.billed_calls,
    units: r.units,
    billedCallsToday: r.billed_today,
    unitsToday: r.units_today,
    lastSuccessAt: r.last_success_at === null ? null : new Date(r.last_success_at),
    lastError: r.last_error,
    lastErrorKind: r.last_error_kind,
    failedPartitions: r.failed_list ?? [],
  }));
}
