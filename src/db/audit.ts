/**
 * The audit table: one row per gateway attempt. A row is written before its request is sent (no
 * row, no call) and completed with the answer. One left without an answer (a crash, a kill, an
 * abort at the shutdown deadline) keeps `billed` null: the gateway may have billed it.
 */
import { and, desc, eq, gte, isNotNull, isNull, sql, type SQL } from 'drizzle-orm';
import { BACKFILL_CONTROL, backfillControlSchema, type BackfillControl } from '../domain/backfill.js';
import { BACKFILL_BUDGET_DAY, backfillBudgetScope, backfillScope, type BudgetScope } from '../domain/budget.js';
import type { Operation } from '../domain/spec.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import { firstUnreserved, releaseBudget } from './budget.js';
import type { Db, Updater } from './connection.js';
import { prepared, slot, type Bound, type Prepared } from './prepared.js';
import { backfills, budgetCounters as c, gatewayExecutions as e } from './schema.js';

/** Where an attempt came from: which job, which attempt of it, and what the call was for. */
export interface CallContext {
  streamKey: string;
  partitionKey: string;
  jobId: string | null;
  attempt: number;
  purpose: string;
  backfillId?: string | null;
}

/** A backfill's control and cap, as the statement that begins an attempt read them. */
export interface Gate {
  control: BackfillControl;
  maxBilledCalls: number | null;
}

/**
 * `attemptId` when every scope was reserved and the row written; else `refused` names a scope at
 * its cap, or (both null) the backfill's control holds the call. `scopes`: every scope the
 * statement reserved in, the backfill's included, for giving the units back.
 */
export interface Begun {
  attemptId: number | null;
  refused: BudgetScope | null;
  gate: Gate | null;
  scopes: BudgetScope[];
}

interface BegunRow {
  reserved: string[];
  id: string | number | null;
  control: string | null;
  max_billed_calls: number | null;
  gated: boolean;
}

/** The statement that begins an attempt, for `n` scopes besides the backfill's: rendered once per `n`. */
const beginStatements = new Map<number, Prepared<Record<string, unknown>>>();

function beginStatement(n: number): Prepared<Record<string, unknown>> {
  const made = beginStatements.get(n);
  if (made) return made;
  const statement = prepared(() => beginSql(n));
  beginStatements.set(n, statement);
  return statement;
}

function beginSql(n: number): SQL {
  const columns = [
    e.operation,
    e.streamKey,
    e.partitionKey,
    e.jobId,
    e.attempt,
    e.callPurpose,
    e.backfillId,
    e.request,
    e.startedAt,
  ];
  const given = Array.from(
    { length: n },
    (_, i) => sql`select ${slot(`scope${i}`)}::text as scope, ${slot(`day${i}`)}::date as day,
      ${slot(`cap${i}`)}::int as cap union all `,
  );
  return sql`
    with gate as (select control, max_billed_calls from ${backfills} where id = ${slot('backfillId')}::text),
    scopes as (
      ${sql.join(given)}select ${slot('backfillScope')}::text, ${BACKFILL_BUDGET_DAY}::date,
        g.max_billed_calls from gate g
    ),
    reserved as (
      insert into ${c} (scope, day, calls)
      select s.scope, s.day, 1 from scopes s
      where (s.cap is null or s.cap >= 1)
        and coalesce((select control from gate), ${BACKFILL_CONTROL.active}) = ${BACKFILL_CONTROL.active}
      on conflict (scope, day) do update set calls = ${c}.calls + 1
      where ${c}.calls < coalesce((select s.cap from scopes s where s.scope = excluded.scope), 2147483647)
      returning scope
    ),
    attempt as (
      insert into ${e} (${sql.join(
        columns.map((col) => sql.identifier(col.name)),
        sql`, `,
      )})
      select ${slot('operation')}::text, ${slot('streamKey')}::text, ${slot('partitionKey')}::text,
        ${slot('jobId')}::text, ${slot('attempt')}::int, ${slot('purpose')}::text, ${slot('callBackfillId')}::text,
        ${slot('request')}::jsonb, ${slot('startedAt')}::timestamptz
      where (select count(*) from reserved) = (select count(*) from scopes)
      returning ${sql.identifier(e.id.name)}
    )
    select coalesce((select array_agg(scope) from reserved), '{}') as reserved, (select id from attempt) as id,
      (select control from gate) as control, (select max_billed_calls from gate) as max_billed_calls,
      exists (select 1 from gate) as gated`;
}

/**
 * Before the request leaves, in one statement (one round trip, atomic by itself): the backfill's
 * control and cap read (`backfillId`), a budget unit reserved in every scope (the backfill's own
 * with the cap just read) while the backfill is active, and, only if every scope was reserved, the
 * row that proves the call was made, whatever happens next. Refused: no row is written, and the
 * units this statement did reserve in other scopes are given back (a concurrent reservation may
 * meanwhile see them taken: it is then held a little early, never let past a cap).
 */
export async function beginAttempt(
  db: Db,
  scopes: BudgetScope[],
  operation: Operation,
  request: object,
  ctx: CallContext,
  startedAt: Date,
  backfillId: string | null = null,
): Promise<Begun> {
  const values: Record<string, unknown> = {
    backfillId,
    backfillScope: backfillId === null ? null : backfillScope(backfillId),
    operation,
    streamKey: ctx.streamKey,
    partitionKey: ctx.partitionKey,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
    purpose: ctx.purpose,
    callBackfillId: ctx.backfillId ?? null,
    request: JSON.stringify(request),
    startedAt: startedAt.toISOString(),
  };
  scopes.forEach((s, i) => Object.assign(values, { [`scope${i}`]: s.scope, [`day${i}`]: s.day, [`cap${i}`]: s.cap }));
  const rows = await beginStatement(scopes.length).rows<BegunRow>(db, values);
  const row = rows[0];
  const gate: Gate | null = row?.gated
    ? { control: backfillControlSchema.catch('paused').parse(row.control), maxBilledCalls: row.max_billed_calls }
    : null;
  const all = gate && backfillId !== null ? [...scopes, backfillBudgetScope(backfillId, gate.maxBilledCalls)] : scopes;
  if (row?.id !== null && row?.id !== undefined) return { attemptId: Number(row.id), refused: null, gate, scopes: all };
  const reserved = row?.reserved ?? [];
  await releaseBudget(
    db,
    all.filter((s) => reserved.includes(s.scope)),
  );
  if (gate && gate.control !== BACKFILL_CONTROL.active) return { attemptId: null, refused: null, gate, scopes: all };
  return { attemptId: null, refused: firstUnreserved(all, reserved) ?? all[0]!, gate, scopes: all };
}

/**
 * The statement that began an attempt lost its answer (a connection cut or silent): if it committed,
 * its row is ended as never sent (the call was not made, so nothing was billed) and its budget units
 * given back. Found by what the caller wrote into it; nothing changes when it did not commit.
 */
export async function abandonAttempt(
  db: Db,
  ctx: CallContext,
  startedAt: Date,
  scopes: ReadonlyArray<Pick<BudgetScope, 'scope' | 'day'>>,
): Promise<void> {
  await db.execute(sql`
    with gone as (
      update ${e} set finished_at = now(), billed = false, error_kind = 'transport',
        error_detail = 'not sent: the statement that began this attempt lost its answer'
      where stream_key = ${ctx.streamKey} and partition_key = ${ctx.partitionKey}
        and job_id is not distinct from ${ctx.jobId}::text
        and attempt = ${ctx.attempt}::int and call_purpose = ${ctx.purpose}
        and started_at = ${startedAt.toISOString()}::timestamptz
        and finished_at is null
      returning 1
    )
    update ${c} set calls = calls - 1
    where calls > 0 and exists (select 1 from gone) and (${sql.join(
      scopes.map((s) => sql`(scope = ${s.scope} and day = ${s.day}::date)`),
      sql` or `,
    )})`);
}

/**
 * No answer at all (no HTTP response) may still have been billed: such an attempt is billed unknown,
 * unless its request never left (no connection was made): nothing reached the gateway to bill.
 */
export function billedOf(r: AttemptRecord): boolean | null {
  if (r.unsent === true) return false;
  const answerLost = r.errorKind === 'timeout' || r.errorKind === 'transport';
  // An answer that stopped before its outcome says nothing of billing, whether or not headers came.
  return r.httpStatus === null || (answerLost && r.outcome === null) ? null : r.billed;
}

/** What completing an audit row writes: the answer's facts, or what is known of a failure. */
export interface AuditCompletion {
  request: Record<string, unknown>;
  httpStatus: number | null;
  code: number | null;
  message: string | null;
  outcome: string | null;
  billed: boolean | null;
  units: number | null;
  executionId: string | null;
  invocationId: string | null;
  errorKind: string | null;
  errorDetail: string | null;
  truncated: boolean | null;
  rowsWritten: number;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
}

/** Pure: the facts an attempt's record leaves on its audit row. */
export function auditCompletion(r: AttemptRecord, truncated: boolean | null, rowsWritten = 0): AuditCompletion {
  return {
    request: r.request,
    httpStatus: r.httpStatus,
    code: r.code,
    message: r.message,
    outcome: r.outcome,
    billed: billedOf(r),
    units: r.units,
    executionId: r.executionId,
    invocationId: r.invocationId,
    errorKind: r.errorKind,
    errorDetail: r.errorDetail,
    truncated,
    rowsWritten,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    durationMs: r.durationMs,
  };
}

/**
 * The facts written onto the row begun before the call: the statement, not yet run (db/answers.ts
 * runs it together with the partition's progress; db/prepared.ts renders it once with placeholders).
 */
export function completion(tx: Updater, attemptId: number | SQL, facts: Bound<AuditCompletion>) {
  return tx.update(e).set(facts).where(eq(e.id, attemptId));
}

/** An attempt that moves no partition (a liveness probe): its audit row alone is completed. */
export async function completeAttempt(
  db: Db,
  attemptId: number,
  r: AttemptRecord,
  billed: (r: AttemptRecord) => boolean | null = billedOf,
): Promise<void> {
  await completion(db, attemptId, { ...auditCompletion(r, null), billed: billed(r) });
}

/** Cut off before its answer came (shutdown deadline): ended, but whether it was billed is unknown. */
export async function markAttemptUnknown(db: Db, attemptId: number, detail: string): Promise<void> {
  await db
    .update(e)
    .set({ billed: null, errorKind: 'unknown', errorDetail: detail, finishedAt: new Date() })
    .where(eq(e.id, attemptId));
}

/** Refused before sending (the request broke the spec): nothing was called, nothing billed. */
/** Never sent: the client refused a request that breaks the spec (kept: it is why the job failed). */
export async function markAttemptRefused(db: Db, attemptId: number, detail: string): Promise<void> {
  await db
    .update(e)
    .set({ billed: false, errorKind: 'parameters', errorDetail: detail, finishedAt: new Date() })
    .where(eq(e.id, attemptId));
}

/** A row begun for a call that was then held back (shutdown began): no call, so no row. */
export async function discardAttempt(db: Db, attemptId: number): Promise<void> {
  await db.delete(e).where(and(eq(e.id, attemptId), isNull(e.finishedAt)));
}

/** The latest answered call of a partition since `since`: the execution a finished read's marks cite. */
export async function lastAnswerOf(
  db: Db,
  ref: { streamKey: string; partitionKey: string },
  since: Date,
): Promise<number | null> {
  const [row] = await db
    .select({ id: e.id })
    .from(e)
    .where(
      and(
        eq(e.streamKey, ref.streamKey),
        eq(e.partitionKey, ref.partitionKey),
        gte(e.startedAt, since),
        isNull(e.errorKind),
        isNotNull(e.finishedAt),
      ),
    )
    .orderBy(desc(e.id))
    .limit(1);
  return row?.id ?? null;
}
