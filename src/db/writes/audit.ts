import { and, eq, sql } from 'drizzle-orm';
import type { AttemptRecord } from '../../gateway/attempt.js';
import type { Db, Tx } from '../connection.js';
import { gatewayExecutions, ingestPartitions } from '../schema.js';

/** Where an attempt came from: which job, which attempt of it, and what the call was for. */
export interface CallContext {
  streamKey: string;
  partitionKey: string;
  jobId: string | null;
  attempt: number;
  purpose: string;
}

export async function insertAudit(tx: Tx, r: AttemptRecord, ctx: CallContext, truncated: boolean | null): Promise<number> {
  const [row] = await tx
    .insert(gatewayExecutions)
    .values({
      operation: r.operation,
      streamKey: ctx.streamKey,
      partitionKey: ctx.partitionKey,
      jobId: ctx.jobId,
      attempt: ctx.attempt,
      callPurpose: ctx.purpose,
      request: r.request,
      httpStatus: r.httpStatus,
      code: r.code,
      message: r.message,
      outcome: r.outcome,
      billed: r.billed,
      units: r.units,
      executionId: r.executionId,
      invocationId: r.invocationId,
      errorKind: r.errorKind,
      errorDetail: r.errorDetail,
      truncated,
      rowsWritten: 0,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
      durationMs: r.durationMs,
    })
    .returning({ id: gatewayExecutions.id });
  return row!.id;
}

export async function setRowsWritten(tx: Tx, executionRowId: number, rows: number): Promise<void> {
  await tx.update(gatewayExecutions).set({ rowsWritten: rows }).where(eq(gatewayExecutions.id, executionRowId));
}

export interface PartitionProgress {
  frontier: unknown;
  done: boolean;
  rowsWritten: number;
}

/** Bumps the partition's call counters; a failed attempt also records the error. */
export async function bumpPartition(
  tx: Tx,
  ctx: CallContext,
  r: AttemptRecord,
  progress: PartitionProgress | null,
): Promise<void> {
  const now = new Date();
  await tx
    .update(ingestPartitions)
    .set({
      calls: sql`${ingestPartitions.calls} + 1`,
      billedCalls: sql`${ingestPartitions.billedCalls} + ${r.billed ? 1 : 0}`,
      units: sql`${ingestPartitions.units} + ${r.billed ? (r.units ?? 0) : 0}`,
      rowsWritten: sql`${ingestPartitions.rowsWritten} + ${progress?.rowsWritten ?? 0}`,
      updatedAt: now,
      ...(progress
        ? {
            frontier: progress.frontier,
            state: progress.done ? 'done' : 'running',
            completedAt: progress.done ? now : null,
            lastError: progress.done ? null : sql`${ingestPartitions.lastError}`,
            lastErrorKind: progress.done ? null : sql`${ingestPartitions.lastErrorKind}`,
          }
        : { state: 'running', lastError: r.errorDetail, lastErrorKind: r.errorKind }),
    })
    .where(and(eq(ingestPartitions.streamKey, ctx.streamKey), eq(ingestPartitions.partitionKey, ctx.partitionKey)));
}

/** A failed attempt: its audit row and the partition's error, together. */
export async function recordFailedAttempt(db: Db, r: AttemptRecord, ctx: CallContext, truncated: boolean | null = null): Promise<void> {
  await db.transaction(async (tx) => {
    await insertAudit(tx, r, ctx, truncated);
    await bumpPartition(tx, ctx, r, null);
  });
}

/**
 * One answer in one transaction: its audit row, the rows `writeRows` upserts (told the audit row's
 * id, which they reference), the count written back to the audit row, and the partition's progress.
 */
export async function recordAnswer(
  db: Db,
  r: AttemptRecord,
  ctx: CallContext,
  truncated: boolean | null,
  writeRows: (tx: Tx, executionRowId: number) => Promise<number>,
  progress: Omit<PartitionProgress, 'rowsWritten'>,
): Promise<{ executionRowId: number; rowsWritten: number }> {
  return db.transaction(async (tx) => {
    const executionRowId = await insertAudit(tx, r, ctx, truncated);
    const rowsWritten = await writeRows(tx, executionRowId);
    await setRowsWritten(tx, executionRowId, rowsWritten);
    await bumpPartition(tx, ctx, r, { ...progress, rowsWritten });
    return { executionRowId, rowsWritten };
  });
}
