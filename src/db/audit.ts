/**
 * The audit table: one row per gateway attempt. A row is written before its request is sent (no
 * row, no call) and completed with the answer. One left without an answer (a crash, a kill, an
 * abort at the shutdown deadline) keeps `billed` null: the gateway may have billed it.
 */
import { and, desc, eq, gte, isNotNull, isNull } from 'drizzle-orm';
import type { Operation } from '../domain/spec.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { Db, Tx } from './connection.js';
import { gatewayExecutions } from './schema.js';

/** Where an attempt came from: which job, which attempt of it, and what the call was for. */
export interface CallContext {
  streamKey: string;
  partitionKey: string;
  jobId: string | null;
  attempt: number;
  purpose: string;
  backfillId?: string | null;
}

/** Before the request leaves: the row that proves the call was made, whatever happens next. */
export async function beginAttempt(db: Db | Tx, operation: Operation, request: object, ctx: CallContext, startedAt: Date): Promise<number> {
  const [row] = await db
    .insert(gatewayExecutions)
    .values({
      operation,
      streamKey: ctx.streamKey,
      partitionKey: ctx.partitionKey,
      jobId: ctx.jobId,
      attempt: ctx.attempt,
      callPurpose: ctx.purpose,
      backfillId: ctx.backfillId ?? null,
      request,
      billed: null,
      startedAt,
    })
    .returning({ id: gatewayExecutions.id });
  return row!.id;
}

/** No answer at all (no HTTP response) may still have been billed: such an attempt is billed unknown. */
export function billedOf(r: AttemptRecord): boolean | null {
  return r.httpStatus === null ? null : r.billed;
}

/** The answer, or what is known of a failure, written onto the row begun before the call. */
export async function completeAttempt(tx: Tx | Db, attemptId: number, r: AttemptRecord, truncated: boolean | null, rowsWritten = 0): Promise<void> {
  await tx
    .update(gatewayExecutions)
    .set({
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
    })
    .where(eq(gatewayExecutions.id, attemptId));
}

/** Cut off before its answer came (shutdown deadline): ended, but whether it was billed is unknown. */
export async function markAttemptUnknown(db: Db, attemptId: number, detail: string): Promise<void> {
  await db
    .update(gatewayExecutions)
    .set({ billed: null, errorKind: 'unknown', errorDetail: detail, finishedAt: new Date() })
    .where(eq(gatewayExecutions.id, attemptId));
}

/** Refused before sending (the request broke the spec): nothing was called, nothing billed. */
/** Never sent: the client refused a request that breaks the spec (kept: it is why the job failed). */
export async function markAttemptRefused(db: Db, attemptId: number, detail: string): Promise<void> {
  await db
    .update(gatewayExecutions)
    .set({ billed: false, errorKind: 'parameters', errorDetail: detail, finishedAt: new Date() })
    .where(eq(gatewayExecutions.id, attemptId));
}

/** A row begun for a call that was then held back (shutdown began): no call, so no row. */
export async function discardAttempt(db: Db, attemptId: number): Promise<void> {
  await db.delete(gatewayExecutions).where(and(eq(gatewayExecutions.id, attemptId), isNull(gatewayExecutions.finishedAt)));
}

/** The latest answered call of a partition since `since`: the execution a finished read's marks cite. */
export async function lastAnswerOf(db: Db, ref: { streamKey: string; partitionKey: string }, since: Date): Promise<number | null> {
  const [row] = await db
    .select({ id: gatewayExecutions.id })
    .from(gatewayExecutions)
    .where(
      and(
        eq(gatewayExecutions.streamKey, ref.streamKey),
        eq(gatewayExecutions.partitionKey, ref.partitionKey),
        gte(gatewayExecutions.startedAt, since),
        isNull(gatewayExecutions.errorKind),
        isNotNull(gatewayExecutions.finishedAt),
      ),
    )
    .orderBy(desc(gatewayExecutions.id))
    .limit(1);
  return row?.id ?? null;
}
