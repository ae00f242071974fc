/**
 * Backfills as an operator handles them: created with an id, paused, resumed, cancelled, given a
 * larger budget, and checked for what holds them. PostgreSQL holds the control state (workers check
 * it before every call); the queues only carry the work, so pausing takes a backfill's waiting jobs
 * off them and resuming lets the reconciler put back whatever its partitions still need.
 */
import { randomInt } from 'node:crypto';
import type { Queue } from 'bullmq';
import {
  insertBackfill,
  loadBackfill,
  loadBackfillGate,
  setBackfillCap,
  setBackfillControl,
  type BackfillRecord,
  type NewBackfill,
} from '../db/backfills.js';
import { budgetUsed } from '../db/budget.js';
import type { Db } from '../db/connection.js';
import { markCancelled, unfinishedOfBackfill, type PartitionRef } from '../db/partitions.js';
import { backfillSummaries, type BackfillSummary } from '../db/queries/backfills.js';
import {
  applyControl,
  BACKFILL_CONTROL,
  haltOf,
  newBackfillId,
  type ControlCommand,
  type Halt,
} from '../domain/backfill.js';
import {
  BACKFILL_BUDGET_DAY,
  backfillScope,
  DAY_SCOPE,
  isUsedUp,
  nextUtcMidnightMs,
  utcDayOf,
} from '../domain/budget.js';
import type { EarthquakeFilters } from '../domain/filters.js';
import { OPERATION_NAMES, type Operation } from '../domain/spec.js';
import { earthquakeStream, indicatorStream } from '../domain/streams.js';
import { toRfc3339 } from '../domain/time.js';
import { UsageError } from '../errors.js';
import { partitionJobId } from '../planning/work.js';
import { reconcileQueues } from './reconcile.js';

export type BackfillQueues = Record<Operation, Queue>;

/** What a backfill command asked for: enough to name it and its streams (an ingest/plan BackfillRequest fits). */
export type BackfillScope =
  | { operation: 'earthquake'; filters: EarthquakeFilters; fromMs: number; toMs: number; streamName?: string | null }
  | {
      operation: 'indicator';
      indicators: string[];
      countries: string[];
      fromYear: number;
      toYear: number;
      streamName?: string | null;
    };

/** The streams a backfill plans partitions of. Pure. */
export function streamKeysOf(b: BackfillScope): string[] {
  if (b.operation === 'earthquake') return [earthquakeStream(b.filters).streamKey];
  return b.indicators.flatMap((indicator) =>
    b.countries.map((country) => indicatorStream({ indicator, country }).streamKey),
  );
}

/** One line naming what a backfill covers, for `backfill list`. Pure. */
export function describeBackfill(b: BackfillScope): string {
  const stream = b.streamName ? `stream ${b.streamName}: ` : '';
  if (b.operation === 'indicator')
    return `${stream}indicators ${b.indicators.join(',')} x ${b.countries.join(',')} ${b.fromYear}..${b.toYear}`;
  const magnitude = b.filters.minMagnitude === null ? 'any magnitude' : `magnitude >= ${b.filters.minMagnitude}`;
  const c = b.filters.circle;
  const area = c ? `circle ${c.latitude},${c.longitude} radius ${c.radiusKm} km` : 'worldwide';
  return `${stream}earthquakes ${toRfc3339(b.fromMs)}..${toRfc3339(b.toMs)}, ${magnitude}, ${area}`;
}

/** Records the backfill a command is about to plan, with its cap; returns its id. */
export async function recordBackfill(db: Db, b: BackfillScope, maxBilledCalls: number | null): Promise<string> {
  return createBackfill(db, {
    operation: b.operation,
    description: describeBackfill(b),
    streamKeys: streamKeysOf(b),
    maxBilledCalls,
  });
}

/** Records a new backfill under a fresh id (drawn again on the rare clash) and returns it. */
export async function createBackfill(
  db: Db,
  x: Omit<NewBackfill, 'id'>,
  nowMs = Date.now(),
  random16: () => number = () => randomInt(0x10000),
): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const id = newBackfillId(nowMs, random16());
    if (await insertBackfill(db, { ...x, id })) return id;
  }
  throw new Error('could not draw a free backfill id in 50 tries');
}

type Unfinished = PartitionRef & { operation: string; jobId: string };

async function unfinishedJobs(db: Db, backfillId: string): Promise<Unfinished[]> {
  const rows = await unfinishedOfBackfill(db, backfillId);
  return rows.flatMap((r) =>
    OPERATION_NAMES.includes(r.operation as Operation)
      ? [{ ...r, jobId: partitionJobId(r.operation as Operation, r.streamKey, r.partitionKey) }]
      : [],
  );
}

const queueOf = (queues: BackfillQueues, operation: string): Queue => queues[operation as Operation];

/**
 * Takes the jobs of these partitions off the queues, except running ones (a worker holds their lock:
 * they stop by themselves at their next call). Returns the partitions whose job is running.
 */
async function takeOffQueues(
  queues: BackfillQueues,
  parts: Unfinished[],
): Promise<{ removed: number; running: Unfinished[] }> {
  let removed = 0;
  const running: Unfinished[] = [];
  for (const part of parts) {
    const queue = queueOf(queues, part.operation);
    removed += await queue.remove(part.jobId).catch(() => 0);
    if ((await queue.getJobState(part.jobId)) === 'active') running.push(part);
  }
  return { removed, running };
}

export interface ControlResult {
  backfill: BackfillRecord;
  /** Jobs taken off the queues (pause, cancel). */
  removed: number;
  /** Partitions whose job was running: it stops before its next call (pause, cancel). */
  running: number;
  /** Partitions marked cancelled now (cancel); running ones are marked when they stop. */
  cancelled: number;
  /** Partitions queued again (resume). */
  requeued: number;
}

async function loadOrRefuse(db: Db, id: string): Promise<BackfillRecord> {
  const backfill = await loadBackfill(db, id);
  if (!backfill) throw new UsageError(`no backfill "${id}" (\`gateway-ingest backfill list\` shows them)`);
  return backfill;
}

async function setControl(db: Db, backfill: BackfillRecord, command: ControlCommand): Promise<BackfillRecord> {
  const next = applyControl(backfill.control, command);
  if ('refused' in next) throw new UsageError(`backfill ${backfill.id}: cannot ${command}: ${next.refused}`);
  if (!(await setBackfillControl(db, backfill.id, next.to)))
    throw new UsageError(`backfill ${backfill.id}: cannot ${command}: it was cancelled meanwhile`);
  return { ...backfill, control: next.to };
}

/** Running jobs stop before their next call; waiting and delayed ones are taken off the queues. */
export async function pauseBackfill(db: Db, queues: BackfillQueues, id: string): Promise<ControlResult> {
  const backfill = await setControl(db, await loadOrRefuse(db, id), 'pause');
  const { removed, running } = await takeOffQueues(queues, await unfinishedJobs(db, id));
  return { backfill, removed, running: running.length, cancelled: 0, requeued: 0 };
}

/** Jobs held by a budget are let go at once instead of at their next periodic look. */
async function promoteHeld(queues: BackfillQueues, parts: Unfinished[]): Promise<void> {
  for (const part of parts) {
    const job = await queueOf(queues, part.operation).getJob(part.jobId);
    if (job && (await job.getState()) === 'delayed') await job.promote().catch(() => undefined);
  }
}

/**
 * Active again, optionally with a new cap: the reconciler queues every partition that has no job
 * (the ones pause took off), and jobs held by the budget are let go.
 */
export async function resumeBackfill(
  db: Db,
  queues: BackfillQueues,
  id: string,
  maxBilledCalls?: number | null,
): Promise<ControlResult> {
  const current = await loadOrRefuse(db, id);
  const backfill = await setControl(db, current, 'resume');
  if (maxBilledCalls !== undefined) await setBackfillCap(db, id, maxBilledCalls);
  const reconciled = await reconcileQueues(db, queues);
  await promoteHeld(queues, await unfinishedJobs(db, id));
  const mine = new Set((await unfinishedJobs(db, id)).map((p) => `${p.streamKey} ${p.partitionKey}`));
  const requeued = reconciled.requeued.filter((label) => mine.has(label)).length;
  return {
    backfill: { ...backfill, maxBilledCalls: maxBilledCalls === undefined ? backfill.maxBilledCalls : maxBilledCalls },
    removed: 0,
    running: 0,
    cancelled: 0,
    requeued,
  };
}

/** A new cap (null: none); jobs held by the old one are let go. Control is left as it is. */
export async function setBackfillBudget(
  db: Db,
  queues: BackfillQueues,
  id: string,
  maxBilledCalls: number | null,
): Promise<BackfillRecord> {
  const backfill = await loadOrRefuse(db, id);
  if (backfill.control === BACKFILL_CONTROL.cancelled)
    throw new UsageError(`backfill ${id}: cannot change the budget: it was cancelled`);
  await setBackfillCap(db, id, maxBilledCalls);
  await promoteHeld(queues, await unfinishedJobs(db, id));
  return { ...backfill, maxBilledCalls };
}

/**
 * Cancelled for good: waiting jobs are taken off the queues and their partitions marked cancelled
 * (failed, kind `cancelled`); running jobs finish the call they are making, then stop and mark their
 * own. What was written stays; a later backfill of the same range plans only what is missing.
 */
export async function cancelBackfill(db: Db, queues: BackfillQueues, id: string): Promise<ControlResult> {
  const backfill = await setControl(db, await loadOrRefuse(db, id), 'cancel');
  const parts = await unfinishedJobs(db, id);
  const { removed, running } = await takeOffQueues(queues, parts);
  const busy = new Set(running.map((p) => p.jobId));
  const cancelled = await markCancelled(
    db,
    parts.filter((p) => !busy.has(p.jobId)),
    `backfill ${id} was cancelled`,
  );
  return { backfill, removed, running: running.length, cancelled, requeued: 0 };
}

async function anyRunning(queues: BackfillQueues, parts: Unfinished[]): Promise<boolean> {
  for (const part of parts) {
    if ((await queueOf(queues, part.operation).getJobState(part.jobId)) === 'active') return true;
  }
  return false;
}

/** What holds the backfill now (paused, cancelled, at a budget), or null while it may go on. */
export async function backfillHalt(
  db: Db,
  queues: BackfillQueues,
  id: string,
  dayCap: number | null,
  nowMs = Date.now(),
): Promise<Halt | null> {
  const gate = await loadBackfillGate(db, id);
  if (!gate) return null;
  const used = await budgetUsed(db, { scope: backfillScope(id), day: BACKFILL_BUDGET_DAY });
  const dayUsed = await budgetUsed(db, { scope: DAY_SCOPE, day: utcDayOf(nowMs) });
  const atBudget = isUsedUp(used, gate.maxBilledCalls) || isUsedUp(dayUsed, dayCap);
  // Only at a budget does it matter whether a job still runs: it may finish the backfill with the last unit.
  const jobsRunning =
    gate.control === BACKFILL_CONTROL.active && atBudget
      ? await anyRunning(queues, await unfinishedJobs(db, id))
      : false;
  return haltOf({
    control: gate.control,
    maxBilledCalls: gate.maxBilledCalls,
    used,
    dayUsed,
    dayCap,
    nextDayMs: nextUtcMidnightMs(nowMs),
    jobsRunning,
  });
}

export async function listBackfills(db: Db, limit: number): Promise<BackfillSummary[]> {
  return backfillSummaries(db, { limit });
}
