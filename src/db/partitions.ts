/**
 * The partition table's only writer. Every state change is one of the named transitions of
 * domain/partition.ts, applied in SQL so that concurrent workers never move a partition backwards.
 */
import { and, eq, gte, inArray, isNull, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Interval } from '../domain/interval.js';
import { BACKFILL_CONTROL } from '../domain/backfill.js';
import {
  CANCELLED_ERROR_KIND,
  PARTITION_STATE,
  TRANSITIONS,
  type PartitionState,
  type PlannedPartition,
  type StoredPartition,
  type Transition,
} from '../domain/partition.js';
import type { Range } from '../domain/ranges.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import { refusedByClock } from '../gateway/classify.js';
import type { Db, Tx, Updater } from './connection.js';
import type { Bound } from './prepared.js';
import { backfills, ingestPartitions as p, ingestStreams } from './schema.js';

export interface PartitionRef {
  streamKey: string;
  partitionKey: string;
}

/** `case when state in (from) then to else state end`: a transition never applies out of turn. */
function transitionSql(t: Transition): SQL {
  const { from, to } = TRANSITIONS[t];
  const list = sql.join(
    from.map((s) => sql`${s}`),
    sql`, `,
  );
  return sql`case when ${p.state} in (${list}) then ${to} else ${p.state} end`;
}

const isRef = (ref: Bound<PartitionRef>) => and(eq(p.streamKey, ref.streamKey), eq(p.partitionKey, ref.partitionKey));

/**
 * `planned`: new partitions start pending, failed ones (cancelled ones too) are planned again,
 * resuming from their frontier. With `refresh`, `reset`: every one (done ones too) starts over with
 * no frontier, so the window is read again. Each carries the backfill that planned it, if any. A
 * new partition of a first read skips what other reads proved; a refresh reads all of its window;
 * a partition planned again keeps what it was.
 */
export async function recordPlanned(db: Db, planned: PlannedPartition[], refresh: boolean): Promise<void> {
  for (let i = 0; i < planned.length; i += 1000) {
    const batch = planned
      .slice(i, i + 1000)
      .map((x) => ({ ...x, state: PARTITION_STATE.pending, frontier: null, skipProven: !refresh }));
    await db
      .insert(p)
      .values(batch)
      .onConflictDoUpdate({
        target: [p.streamKey, p.partitionKey],
        set: {
          jobId: sql`excluded.job_id`,
          // A backfill takes the partition over (its pause, cancel and budget now apply to it); a
          // scheduled run (no backfill) leaves it with an active backfill, and frees it from one
          // that is paused or cancelled, whose control would otherwise stop the scheduled read.
          backfillId: sql`coalesce(excluded.backfill_id, (select ${backfills.id} from ${backfills}
            where ${backfills.id} = ${p.backfillId} and ${backfills.control} = ${BACKFILL_CONTROL.active}))`,
          updatedAt: sql`now()`,
          state: transitionSql(refresh ? 'reset' : 'planned'),
          frontier: refresh ? sql`null` : sql`${p.frontier}`,
          skipProven: refresh ? sql`false` : sql`${p.skipProven}`,
          lastError: refresh ? sql`null` : sql`${p.lastError}`,
        },
      });
  }
}

export async function loadPartition(db: Db, ref: PartitionRef) {
  const rows = await db.select().from(p).where(isRef(ref));
  return rows[0] ?? null;
}

export function isDone(partition: { state: string } | null): boolean {
  return partition?.state === PARTITION_STATE.done;
}

/** `failed`: given up on, with the reason `status` shows. */
export async function markFailed(db: Db, ref: PartitionRef, error: string, kind: string): Promise<void> {
  await db
    .update(p)
    .set({ state: transitionSql('failed'), lastError: error, lastErrorKind: kind, updatedAt: new Date() })
    .where(isRef(ref));
}

/**
 * `cancelled`: its backfill was cancelled. Only unfinished partitions move (a done one stays done);
 * the frontier stays, so a later backfill resumes where this one stopped. Returns how many moved.
 */
export async function markCancelled(db: Db, refs: PartitionRef[], reason: string): Promise<number> {
  let moved = 0;
  for (let i = 0; i < refs.length; i += 500) {
    const batch = refs.slice(i, i + 500);
    const rows = await db
      .update(p)
      .set({
        state: transitionSql('cancelled'),
        lastError: reason,
        lastErrorKind: CANCELLED_ERROR_KIND,
        updatedAt: new Date(),
      })
      .where(and(or(...batch.map(isRef)), inArray(p.state, TRANSITIONS.cancelled.from)))
      .returning({ key: p.partitionKey });
    moved += rows.length;
  }
  return moved;
}

/** A backfill's partitions that are still pending or running: what pause and cancel take off the queues. */
export async function unfinishedOfBackfill(
  db: Db,
  backfillId: string,
): Promise<Array<PartitionRef & { operation: string }>> {
  return db
    .select({ streamKey: p.streamKey, partitionKey: p.partitionKey, operation: p.operation })
    .from(p)
    .where(and(eq(p.backfillId, backfillId), inArray(p.state, [PARTITION_STATE.pending, PARTITION_STATE.running])))
    .orderBy(p.streamKey, p.partitionKey);
}

/** Every partition of a backfill, per stream: what `--wait` on a resumed backfill waits for. */
export async function partitionsOfBackfill(
  db: Db,
  backfillId: string,
): Promise<Array<{ streamKey: string; partitionKeys: string[] }>> {
  const rows = await db
    .select({ streamKey: p.streamKey, partitionKey: p.partitionKey })
    .from(p)
    .where(eq(p.backfillId, backfillId))
    .orderBy(p.streamKey, p.partitionKey);
  const byStream = new Map<string, string[]>();
  for (const r of rows) {
    const keys = byStream.get(r.streamKey) ?? [];
    keys.push(r.partitionKey);
    byStream.set(r.streamKey, keys);
  }
  return [...byStream.entries()].map(([streamKey, partitionKeys]) => ({ streamKey, partitionKeys }));
}

export interface Progress {
  frontier: unknown;
  /** The partition is finished: done, or partial (what no query could resolve is in the frontier). */
  finish: 'done' | 'partial' | null;
  /** A number, or an expression of the statement that writes them (the answer's single statement). */
  rowsWritten: number | SQL;
}

/** The finish decides the statement's shape: it is never a placeholder. */
type BoundProgress = Bound<Omit<Progress, 'finish'>> & Pick<Progress, 'finish'>;

/** What one call adds to its partition's counters, and the error of a failed one. */
export interface CallTally {
  billedCalls: number;
  units: number;
  errorKind: string | null;
  errorDetail: string | null;
  /** A failure that does not lengthen the streak of failures in a row (`callTally`). */
  outsideStreak?: boolean;
}

/** Pure: what the attempt adds to its partition. */
export function callTally(r: AttemptRecord): CallTally {
  return {
    billedCalls: r.billed ? 1 : 0,
    units: r.billed ? (r.units ?? 0) : 0,
    errorKind: r.errorKind,
    errorDetail: r.errorDetail,
    // A 429 saying when to come back is waited for, not a failure; one that does not say backs off like one.
    outsideStreak: refusedByClock(r) || (r.errorKind === 'rate_limited' && r.retryAfterMs !== null),
  };
}

/**
 * `progress`, `done` or `partial` after one recorded call, inside the answer transaction: call
 * counters, and with an answer the remaining frontier (and the failure streak reset); an answer
 * that moves nothing (`answered`: a probe, a deletion check) only resets the streak; a failed
 * attempt (null) records its error and lengthens the streak, except a 429 with a Retry-After (the
 * gateway said when) and a refusal its clock explains (time fixes it); `failing_since` keeps when
 * the streak began.
 * Values may be placeholders (db/prepared.ts); `at` is when the partition was last updated.
 */
export function callRecord(
  tx: Updater,
  ref: Bound<PartitionRef>,
  t: Bound<CallTally>,
  progress: BoundProgress | 'answered' | null,
  at: Date | SQL = new Date(),
) {
  const held = t.outsideStreak === true;
  const streak = held ? sql`${p.consecutiveFailures}` : sql`${p.consecutiveFailures} + 1`;
  const since = held ? sql`${p.failingSince}` : sql`coalesce(${p.failingSince}, ${at})`;
  const finish = typeof progress === 'object' && progress !== null ? progress.finish : null;
  const answered =
    progress === 'answered'
      ? { consecutiveFailures: 0, failingSince: null }
      : progress
        ? {
            frontier: progress.frontier,
            state: transitionSql(finish ?? 'progress'),
            completedAt: finish ? at : null,
            consecutiveFailures: 0,
            failingSince: null,
            lastError: finish ? null : sql`${p.lastError}`,
            lastErrorKind: finish ? null : sql`${p.lastErrorKind}`,
          }
        : {
            state: transitionSql('progress'),
            consecutiveFailures: streak,
            failingSince: since,
            lastError: t.errorDetail,
            lastErrorKind: t.errorKind,
          };
  const written = typeof progress === 'object' && progress !== null ? progress.rowsWritten : 0;
  return tx
    .update(p)
    .set({
      calls: sql`${p.calls} + 1`,
      billedCalls: sql`${p.billedCalls} + ${t.billedCalls}`,
      units: sql`${p.units} + ${t.units}`,
      rowsWritten: sql`${p.rowsWritten} + ${written}`,
      updatedAt: at,
      ...answered,
    })
    .where(isRef(ref))
    .returning({ consecutiveFailures: p.consecutiveFailures, failingSince: p.failingSince });
}

/** Done windows (epoch ms) and year chunks of the given streams, for planning only what is missing. */
export async function doneCoverage(db: Db, streamKey: string): Promise<{ windows: Interval[]; years: Range[] }> {
  const rows = await db
    .select({ windowStart: p.windowStart, windowEnd: p.windowEnd, startYear: p.startYear, endYear: p.endYear })
    .from(p)
    .where(and(eq(p.streamKey, streamKey), eq(p.state, PARTITION_STATE.done)));
  return {
    windows: rows.flatMap((r) =>
      r.windowStart && r.windowEnd ? [{ startMs: r.windowStart.getTime(), endMs: r.windowEnd.getTime() }] : [],
    ),
    years: rows.flatMap((r) =>
      r.startYear !== null && r.endYear !== null ? [{ start: r.startYear, end: r.endYear }] : [],
    ),
  };
}

/**
 * Earthquake windows of the stream not done, overlapping [fromMs, toMs]: work already planned (by
 * this or an older version, whatever its window shape) that a new backfill takes over instead of
 * planning the same time again.
 */
export async function unfinishedWindows(db: Db, streamKey: string, fromMs: number, toMs: number): Promise<Interval[]> {
  const rows = await db
    .select({ windowStart: p.windowStart, windowEnd: p.windowEnd })
    .from(p)
    .where(
      and(
        eq(p.streamKey, streamKey),
        ne(p.state, PARTITION_STATE.done),
        lte(p.windowStart, new Date(toMs)),
        gte(p.windowEnd, new Date(fromMs)),
      ),
    );
  return rows.flatMap((r) =>
    r.windowStart && r.windowEnd ? [{ startMs: r.windowStart.getTime(), endMs: r.windowEnd.getTime() }] : [],
  );
}

export interface FinishedCount {
  total: number;
  done: number;
  /** Finished except intervals no query could resolve: not done, and not worth waiting for. */
  partial: number;
  failed: number;
}

/** Finished counts with the partitions' running totals, for progress. */
export interface PartitionProgress extends FinishedCount {
  /** Rows written and billed calls of these partitions so far (all their runs: progress takes the difference). */
  rowsWritten: number;
  billedCalls: number;
}

/** How many of the given partitions are done or failed, and what they wrote and cost: what `--wait` polls. */
export async function countFinished(
  db: Db,
  refs: { streamKey: string; partitionKeys: string[] }[],
): Promise<PartitionProgress> {
  const count: PartitionProgress = { total: 0, done: 0, partial: 0, failed: 0, rowsWritten: 0, billedCalls: 0 };
  for (const ref of refs) {
    count.total += ref.partitionKeys.length;
    for (let i = 0; i < ref.partitionKeys.length; i += 1000) {
      const rows = await db
        .select({
          state: p.state,
          n: sql<number>`count(*)::int`,
          rows: sql<number>`sum(${p.rowsWritten})::float8`,
          billed: sql<number>`sum(${p.billedCalls})::float8`,
        })
        .from(p)
        .where(and(eq(p.streamKey, ref.streamKey), inArray(p.partitionKey, ref.partitionKeys.slice(i, i + 1000))))
        .groupBy(p.state);
      for (const r of rows) {
        count.rowsWritten += r.rows;
        count.billedCalls += r.billed;
        if (r.state === PARTITION_STATE.done) count.done += r.n;
        if (r.state === PARTITION_STATE.partial) count.partial += r.n;
        if (r.state === PARTITION_STATE.failed) count.failed += r.n;
      }
    }
  }
  return count;
}

/** SQL filter for partitions in `state`, for the status queries. */
export function inState(state: PartitionState): SQL {
  return sql`${p.state} = ${state}`;
}

/**
 * Partitions that should have a job (pending or running, of no paused or cancelled backfill),
 * with their stream's params, `afterKey`-paged so that a big backlog is read in bounded batches.
 */
export async function unfinishedPartitions(
  db: Db,
  limit: number,
  after: PartitionRef | null,
): Promise<StoredPartition[]> {
  const page = after
    ? sql`(${p.streamKey}, ${p.partitionKey}) > (${after.streamKey}, ${after.partitionKey})`
    : sql`true`;
  return db
    .select({
      streamKey: p.streamKey,
      partitionKey: p.partitionKey,
      operation: p.operation,
      windowStart: p.windowStart,
      windowEnd: p.windowEnd,
      startYear: p.startYear,
      endYear: p.endYear,
      params: ingestStreams.params,
    })
    .from(p)
    .innerJoin(ingestStreams, eq(ingestStreams.streamKey, p.streamKey))
    .leftJoin(backfills, eq(backfills.id, p.backfillId))
    .where(
      and(
        inArray(p.state, [PARTITION_STATE.pending, PARTITION_STATE.running]),
        or(isNull(backfills.id), eq(backfills.control, 'active')),
        page,
      ),
    )
    .orderBy(p.streamKey, p.partitionKey)
    .limit(limit);
}

/** Which of `refs` are still pending or running: checked again just before a lost job is re-added. */
export async function stillUnfinished(db: Db, refs: PartitionRef[]): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const rows = await db
    .select({ streamKey: p.streamKey, partitionKey: p.partitionKey })
    .from(p)
    .where(and(inArray(p.state, [PARTITION_STATE.pending, PARTITION_STATE.running]), or(...refs.map(isRef))));
  return new Set(rows.map((r) => `${r.streamKey}\u0000${r.partitionKey}`));
}

/** Which of the stream's `keys` are pending or running: a scheduled re-read never restarts one of those. */
export async function inProgress(db: Db, streamKey: string, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db
    .select({ key: p.partitionKey })
    .from(p)
    .where(
      and(
        eq(p.streamKey, streamKey),
        inArray(p.partitionKey, [...keys]),
        inArray(p.state, [PARTITION_STATE.pending, PARTITION_STATE.running]),
      ),
    );
  return new Set(rows.map((r) => r.key));
}

export type FinishedRead = typeof PARTITION_STATE.done | typeof PARTITION_STATE.partial;

/** `done` or `partial`: a read whose answers are all recorded (and whose deletions are reconciled) ends. */
export async function finishPartition(tx: Tx, ref: PartitionRef, finish: FinishedRead): Promise<void> {
  await tx
    .update(p)
    .set({
      state: transitionSql(finish),
      completedAt: new Date(),
      updatedAt: new Date(),
      lastError: null,
      lastErrorKind: null,
    })
    .where(isRef(ref));
}

/**
 * Takes (or renews) the partition for worker run `runId` for `leaseMs`: granted when nobody holds
 * it, the lease ran out, or the run already holds it. False: another live run is reading it.
 */
export async function claimPartition(db: Db, ref: PartitionRef, runId: string, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(p)
    .set({ claimedBy: runId, claimedUntil: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where(and(isRef(ref), sql`(${p.claimedBy} is null or ${p.claimedBy} = ${runId} or ${p.claimedUntil} < now())`))
    .returning({ key: p.partitionKey });
  return rows.length > 0;
}

/** Renews only a claim the run still holds: false once another run took the partition over. */
export async function renewClaim(db: Db, ref: PartitionRef, runId: string, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(p)
    .set({ claimedUntil: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where(and(isRef(ref), eq(p.claimedBy, runId)))
    .returning({ key: p.partitionKey });
  return rows.length > 0;
}

export async function releaseClaim(db: Db, ref: PartitionRef, runId: string): Promise<void> {
  await db
    .update(p)
    .set({ claimedBy: null, claimedUntil: null })
    .where(and(isRef(ref), eq(p.claimedBy, runId)));
}
