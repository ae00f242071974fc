/**
 * Backfills with their progress and spending, for `backfill list` and the halt checks of `--wait`
 * and `status`. Everything is aggregated in PostgreSQL.
 */
import { sql } from 'drizzle-orm';
import { backfillControlSchema, type BackfillControl } from '../../domain/backfill.js';
import { BACKFILL_BUDGET_DAY } from '../../domain/budget.js';
import { PARTITION_STATE as S } from '../../domain/partition.js';
import type { Db } from '../connection.js';

export interface BackfillSummary {
  id: string;
  operation: string;
  description: string;
  control: BackfillControl;
  maxBilledCalls: number | null;
  /** Units reserved in its budget counter: billed calls, and calls whose billing is not known yet. */
  budgetUsed: number;
  /** Calls the audit records as billed. */
  billedCalls: number;
  partitions: { total: number; done: number; partial: number; failed: number; unfinished: number };
  streamKeys: string[];
  createdAt: Date;
}

interface Row extends Record<string, unknown> {
  id: string;
  operation: string;
  description: string;
  control: string;
  max_billed_calls: number | null;
  stream_keys: unknown;
  created_at: Date | string;
  budget_used: number;
  billed_calls: number;
  total: number;
  done: number;
  partial: number;
  failed: number;
}

const toSummary = (r: Row): BackfillSummary => ({
  id: r.id,
  operation: r.operation,
  description: r.description,
  control: backfillControlSchema.catch('paused').parse(r.control),
  maxBilledCalls: r.max_billed_calls,
  budgetUsed: r.budget_used,
  billedCalls: r.billed_calls,
  partitions: {
    total: r.total,
    done: r.done,
    partial: r.partial,
    failed: r.failed,
    unfinished: r.total - r.done - r.partial - r.failed,
  },
  streamKeys: Array.isArray(r.stream_keys) ? r.stream_keys.filter((k): k is string => typeof k === 'string') : [],
  createdAt: new Date(r.created_at),
});

/** The newest `limit` backfills (or only `id`), newest first. */
export async function backfillSummaries(db: Db, o: { limit?: number; id?: string } = {}): Promise<BackfillSummary[]> {
  const which = o.id === undefined ? sql`true` : sql`id = ${o.id}`;
  const result = await db.execute<Row>(sql`
    with listed as (
      select * from backfills where ${which} order by created_at desc, id desc limit ${o.limit ?? 1000}
    ), parts as (
      select backfill_id, count(*)::int as total,
        count(*) filter (where state = ${S.done})::int as done,
        count(*) filter (where state = ${S.partial})::int as partial,
        count(*) filter (where state = ${S.failed})::int as failed
      from ingest_partitions where backfill_id in (select id from listed) group by backfill_id
    ), billed as (
      select backfill_id, count(*)::int as billed_calls
      from gateway_executions where billed and backfill_id in (select id from listed) group by backfill_id
    )
    select l.id, l.operation, l.description, l.control, l.max_billed_calls, l.stream_keys, l.created_at,
      coalesce(c.calls, 0)::int as budget_used, coalesce(x.billed_calls, 0)::int as billed_calls,
      coalesce(p.total, 0)::int as total, coalesce(p.done, 0)::int as done,
      coalesce(p.partial, 0)::int as partial, coalesce(p.failed, 0)::int as failed
    from listed l
    left join budget_counters c on c.scope = 'backfill:' || l.id and c.day = ${BACKFILL_BUDGET_DAY}::date
    left join parts p on p.backfill_id = l.id
    left join billed x on x.backfill_id = l.id
    order by l.created_at desc, l.id desc`);
  return result.rows.map(toSummary);
}

/** Stream keys of the named streams (`ingest_streams.name`, as `backfill --stream` records it) or of that key. */
export async function streamKeysNamed(db: Db, nameOrKey: string): Promise<string[]> {
  const result = await db.execute<{ stream_key: string }>(sql`
    select stream_key from ingest_streams where name = ${nameOrKey} or stream_key = ${nameOrKey} order by stream_key`);
  return result.rows.map((r) => r.stream_key);
}
