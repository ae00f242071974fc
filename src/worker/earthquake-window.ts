/**
 * Covers one window with answers that prove each part complete (below the cap). The read starts
 * from the saved frontier when there is one, runs its queries on lanes (window-lanes.ts), applies
 * each answer as it lands (window-answer.ts), then reconciles deletions and ends the read.
 */
import { finishRead } from '../db/answers.js';
import { lastAnswerOf } from '../db/audit.js';
import { isDone, loadPartition } from '../db/partitions.js';
import { PARTITION_STATE } from '../domain/partition.js';
import { toRfc3339 } from '../domain/time.js';
import {
  initialFrontier,
  provenIntervals,
  resumeRead,
  savedFrontierSchema,
  type Frontier,
  type ReadKind,
  type Region,
} from '../planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../planning/work.js';
import { reconcileDeletions, type DeletionOutcome } from './deletions.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { durable } from './durable.js';
import { emptyStats, shareLearned } from './gateway-facts.js';
import { land } from './window-answer.js';
import { readWindowKnowledge } from './window-knowledge.js';
import { runLanes } from './window-lanes.js';
import type { WindowOutcome, WindowRead } from './window-read.js';

type Partition = Awaited<ReturnType<typeof loadPartition>>;
type Stored = { frontier: Frontier } | { retry: Region[] } | null;

/**
 * The saved frontier of this window: to resume (a read with tasks left, or one whose answers are
 * all in but that had not ended: its deletions are reconciled and it ends), or (a partial window
 * planned again) the intervals left.
 */
function storedState(partition: Partition, job: EarthquakeWindowJob): Stored {
  const parsed = savedFrontierSchema.safeParse(partition?.frontier);
  if (
    !parsed.success ||
    parsed.data.window.startMs !== job.windowStartMs ||
    parsed.data.window.endMs !== job.windowEndMs
  )
    return null;
  if (parsed.data.tasks.length > 0 || partition?.state === PARTITION_STATE.running) return { frontier: parsed.data };
  return parsed.data.unresolved.length > 0 ? { retry: parsed.data.unresolved } : null;
}

/**
 * Where the read starts: the saved frontier taken up by this run, or a new read of the window (a
 * first read less what other reads proved, a refresh of all of it) or of the intervals a partial
 * one left.
 */
async function startingFrontier(
  partition: Partition,
  job: EarthquakeWindowJob,
  deps: ProcessorDeps,
): Promise<Frontier> {
  const stored = storedState(partition, job);
  if (stored && 'frontier' in stored) {
    // A resumed read keeps its scope: only the cap, the hints and the nearby rate are read again.
    const knowledge = await readWindowKnowledge(deps, job, 'resume');
    return resumeRead(stored.frontier, knowledge, Date.now(), deps.knowledgeTtlMs);
  }
  const read: ReadKind = stored
    ? { kind: 'retry', regions: stored.retry }
    : partition?.skipProven
      ? { kind: 'first' }
      : { kind: 'refresh' };
  const window = { startMs: job.windowStartMs, endMs: job.windowEndMs };
  const knowledge = await readWindowKnowledge(deps, job, read);
  // A read of the window starts now: what no answer returns from here on is a deletion candidate.
  return initialFrontier(window, knowledge, read.kind === 'retry' ? 0 : Date.now());
}

/** A failed call stops new ones; the answers still in flight are kept, then the failure is thrown. */
export async function processEarthquakeWindow(
  job: EarthquakeWindowJob,
  ctx: JobContext,
  deps: ProcessorDeps,
): Promise<WindowOutcome> {
  const partition = await loadPartition(deps.db, job);
  if (isDone(partition)) return { calls: 0, rowsWritten: 0, skipped: true };
  const read: WindowRead = {
    job,
    ctx,
    deps,
    backfillId: partition?.backfillId ?? null,
    frontier: await startingFrontier(partition, job, deps),
    failure: null,
    outcome: { calls: 0, rowsWritten: 0, skipped: false },
    evidence: emptyStats(),
    capShared: false,
  };
  const recountBefore = read.frontier.recount;
  try {
    await runLanes(read, (landed, inFlight) => land(read, landed, inFlight));
  } finally {
    await shareLearned(deps, read.evidence, { before: recountBefore, after: read.frontier.recount });
  }
  // Rethrown as a call threw it: the retry layer classifies errors by what they are.
  // eslint-disable-next-line @typescript-eslint/only-throw-error
  if (read.failure !== null) throw read.failure;
  read.outcome.deletions = await reconcileAfterRead(read);
  await endRead(read);
  return read.outcome;
}

/** Deletions of a read whose answers are all in; never fails the window (the next read tries again). */
async function reconcileAfterRead({
  job,
  frontier,
  ctx,
  deps,
  backfillId,
}: WindowRead): Promise<DeletionOutcome | null> {
  try {
    const proof = frontier.startedAtMs > 0 ? await lastAnswerOf(deps.db, job, new Date(frontier.startedAtMs)) : null;
    if (proof === null) return null;
    const d = await reconcileDeletions(job, frontier, proof, ctx, deps, backfillId);
    if (d.candidates > 0)
      deps.log.info({ stream: job.streamKey, window: job.partitionKey, ...d }, 'deletions reconciled');
    return d;
  } catch (err) {
    deps.log.warn(
      { stream: job.streamKey, window: job.partitionKey, err: err instanceof Error ? err.message : String(err) },
      'deletion reconciliation stopped; the next re-read tries again',
    );
    return null;
  }
}

/** Checks cut short (shutdown, a failed check) leave their candidates to the next read: the read still ends. */
async function endRead({ job, frontier, ctx, deps, backfillId }: WindowRead): Promise<void> {
  const finish = frontier.unresolved.length > 0 ? PARTITION_STATE.partial : PARTITION_STATE.done;
  await durable(
    () =>
      finishRead(
        deps.db,
        { ...job, jobId: ctx.jobId, attempt: ctx.attempt, purpose: 'finish', backfillId },
        finish,
        provenIntervals(frontier),
        new Date(),
      ),
    ctx,
    deps.log,
  );
  if (finish === PARTITION_STATE.partial)
    deps.log.warn(
      {
        stream: job.streamKey,
        window: job.partitionKey,
        unresolved: frontier.unresolved.map((r) => `${toRfc3339(r.lo)}/${toRfc3339(r.hi)}`),
      },
      'window partial: intervals no query could resolve',
    );
}
