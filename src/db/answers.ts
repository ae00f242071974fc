/**
 * The answer transaction: everything one gateway attempt changes commits together or not at all,
 * so a job cut off at any point is retried from a consistent state and never pays twice for an
 * answer it already holds. The attempt's audit row was begun before the call (db/audit.ts).
 */
import { sql } from 'drizzle-orm';
import type { AttemptRecord } from '../gateway/attempt.js';
import { auditCompletion, billedOf, completion, type CallContext } from './audit.js';
import type { Db, Tx } from './connection.js';
import { callRecord, callTally, finishPartition, type FinishedRead, type Progress } from './partitions.js';
import { recordProof } from './coverage.js';

/**
 * One answer: its audit row completed, the rows `writeRows` upserts (told the audit row's id, which
 * they reference), the count written back to the audit row, and the partition's progress.
 */
export async function commitAnswer(
  db: Db,
  attemptId: number,
  r: AttemptRecord,
  ctx: CallContext,
  truncated: boolean | null,
  writeRows: (tx: Tx, executionRowId: number) => Promise<number>,
  /** `answered`: the call counts for the partition but moves nothing (a probe, a deletion check). */
  progress: Omit<Progress, 'rowsWritten'> | 'answered',
): Promise<{ executionRowId: number; rowsWritten: number }> {
  return db.transaction(async (tx) => {
    // Rows first, so that the audit row is completed in one write, with their count.
    const rowsWritten = await writeRows(tx, attemptId);
    await recordAttempt(
      tx,
      attemptId,
      r,
      truncated,
      rowsWritten,
      ctx,
      progress === 'answered' ? progress : { ...progress, rowsWritten },
    );
    return { executionRowId: attemptId, rowsWritten };
  });
}

/** The partition's failures since its last recorded answer: how many, and for how long (ms). */
export interface FailureStreak {
  failuresInRow: number;
  failingForMs: number;
}

/** A failed attempt: its audit row and the partition's last error, together. Returns its failure streak. */
export async function commitFailedAttempt(
  db: Db,
  attemptId: number,
  r: AttemptRecord,
  ctx: CallContext,
  billed: (r: AttemptRecord) => boolean | null = billedOf,
): Promise<FailureStreak> {
  return recordAttempt(db, attemptId, r, null, 0, ctx, null, billed);
}

/**
 * The audit row completed and the partition's call recorded in one statement (one round trip,
 * atomic by itself). Returns the partition's failure streak since its last answer.
 */
async function recordAttempt(
  db: Db | Tx,
  attemptId: number,
  r: AttemptRecord,
  truncated: boolean | null,
  rowsWritten: number,
  ctx: CallContext,
  progress: Progress | 'answered' | null,
  billed: (r: AttemptRecord) => boolean | null = billedOf,
): Promise<FailureStreak> {
  const facts = { ...auditCompletion(r, truncated, rowsWritten), billed: billed(r) };
  const result = await db.execute<{ consecutive_failures: number; failing_for_ms: number | null }>(
    sql`with audit as (${completion(db, attemptId, facts).getSQL()}),
      recorded as (${callRecord(db, ctx, callTally(r), progress).getSQL()})
      select consecutive_failures,
        (extract(epoch from (${r.finishedAt.toISOString()}::timestamptz - failing_since)) * 1000)::float8 as failing_for_ms
      from recorded`,
  );
  const row = result.rows[0];
  return { failuresInRow: row?.consecutive_failures ?? 0, failingForMs: Math.max(0, row?.failing_for_ms ?? 0) };
}

/** A read ends: the partition done (or partial) and what it proved complete recorded, together. */
export async function finishRead(
  db: Db,
  ref: CallContext,
  finish: FinishedRead,
  proven: ReadonlyArray<{ lo: number; hi: number }>,
  at: Date,
): Promise<void> {
  await db.transaction(async (tx) => {
    await finishPartition(tx, ref, finish);
    await recordProof(tx, ref.streamKey, proven, at);
  });
}
