import type { CallContext } from '../db/audit.js';
import { recordEarthquakeAnswer } from '../db/earthquake-events.js';
import { finishRead } from '../db/answers.js';
import { lastAnswerOf } from '../db/audit.js';
import { isDone, loadPartition } from '../db/partitions.js';
import { requestMinMagnitude, type EarthquakeFilters } from '../domain/filters.js';
import { PARTITION_STATE } from '../domain/partition.js';
import { toRfc3339 } from '../domain/time.js';
import { GaveUpError } from '../errors.js';
import type { EarthquakeRequest, EarthquakeResult } from '../gateway/schemas.js';
import {
  advance,
  frontierSchema,
  initialFrontier,
  nextQueries,
  provenIntervals,
  splitForLanes,
  taskKey,
  type Frontier,
  type Query,
  type Region,
} from '../planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../planning/work.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { failedAttempt, makeCall, type Call } from './call.js';
import { durable } from './durable.js';
import { reconcileDeletions, type DeletionOutcome } from './deletions.js';
import {
  emptyStats,
  learnFromAnswer,
  MAX_RESULTS,
  shareOrderEvidence,
  tally,
  windowKnowledge,
} from './gateway-facts.js';

/** Pure: the gateway request for one query of a window: the stream's filters, the query's region and circle. */
export function earthquakeRequest(filters: EarthquakeFilters, q: Pick<Query, 'region' | 'circle'>): EarthquakeRequest {
  const circle = q.circle ?? filters.circle;
  return {
    provider: 'quake-catalog',
    start_time: toRfc3339(q.region.lo),
    end_time: toRfc3339(q.region.hi),
    ...requestMinMagnitude(filters),
    ...(circle ? { latitude: circle.latitude, longitude: circle.longitude, radius_km: circle.radiusKm } : {}),
    max_results: MAX_RESULTS,
  };
}

type Stored = { frontier: Frontier } | { retry: Region[] } | null;

/**
 * The saved frontier of this window: to resume (a read with tasks left, or one whose answers are
 * all in but that had not ended: its deletions are reconciled and it ends), or (a partial window
 * planned again) the intervals left.
 */
function storedState(partition: { frontier: unknown; state: string } | null, job: EarthquakeWindowJob): Stored {
  const parsed = frontierSchema.safeParse(partition?.frontier);
  if (
    !parsed.success ||
    parsed.data.window.startMs !== job.windowStartMs ||
    parsed.data.window.endMs !== job.windowEndMs
  )
    return null;
  if (parsed.data.tasks.length > 0 || partition?.state === PARTITION_STATE.running) return { frontier: parsed.data };
  return parsed.data.unresolved.length > 0 ? { retry: parsed.data.unresolved } : null;
}

export interface WindowOutcome {
  calls: number;
  rowsWritten: number;
  skipped: boolean;
  deletions?: DeletionOutcome | null;
}

/** A query's call as it came back: made (answered or failed), or not made at all (stopping, database away). */
type Landed =
  | { key: string; query: Query; call: CallContext; made: Call<EarthquakeResult> }
  | { key: string; query: Query; error: unknown };

/**
 * Pure: how many queries to send now, at most `max` in flight: one when nothing is in flight, more up
 * to the window's fair share of the call slots, and beyond it only on slots nobody waits for.
 */
export function lanesNow(inFlight: number, max: number, fairShare: number, idle: number): number {
  const own = Math.max(fairShare - inFlight, (inFlight === 0 ? 1 : 0) + idle);
  return Math.max(0, Math.min(max - inFlight, own));
}

/**
 * Covers one window with answers that prove each part complete (below the cap), writing each answer with its audit row and the remaining frontier in one transaction,
 * so a job stopped after any call resumes without paying for that call again. Once a walk's
 * rate is known, call slots (its fair share, and idle ones) run parts of it at once (lanes); answers are applied in the
 * order they come. A failed call stops new ones, and the answers still in flight are kept.
 */
export async function processEarthquakeWindow(
  job: EarthquakeWindowJob,
  ctx: JobContext,
  deps: ProcessorDeps,
): Promise<WindowOutcome> {
  const { db, log } = deps;
  const partition = await loadPartition(db, job);
  if (isDone(partition)) return { calls: 0, rowsWritten: 0, skipped: true };
  const window = { startMs: job.windowStartMs, endMs: job.windowEndMs };
  const backfillId = partition?.backfillId ?? null;
  const stored = storedState(partition, job);
  // A read of the whole window starts now: what no answer returns from here on is a deletion candidate.
  let frontier =
    stored && 'frontier' in stored
      ? stored.frontier
      : initialFrontier(
          window,
          await windowKnowledge(deps, job, ctx, backfillId),
          stored?.retry,
          stored?.retry ? 0 : Date.now(),
        );
  const outcome: WindowOutcome = { calls: 0, rowsWritten: 0, skipped: false };
  const evidence = emptyStats();
  const flights = new Map<string, Promise<Landed>>();
  let failure: unknown = null;
  let capShared = false;
  try {
    for (;;) {
      if (failure === null) {
        const want = ctx.lanes
          ? lanesNow(flights.size, ctx.lanes.max, ctx.lanes.slots.fairShare(), ctx.lanes.slots.idle())
          : lanesNow(flights.size, 1, 1, 0);
        const busy = new Set(flights.keys());
        const ready = nextQueries(frontier, busy, want).length;
        if (ready < want && flights.size + ready > 0)
          frontier = splitForLanes(frontier, want - ready, (t) => busy.has(taskKey(t)));
        for (const { key, query } of nextQueries(frontier, busy, want))
          flights.set(key, send(job, key, query, ctx, deps, backfillId));
      }
      if (flights.size === 0) break;
      const landed = await Promise.race(flights.values());
      flights.delete(landed.key);
      outcome.calls++;
      if ('error' in landed) {
        failure ??= landed.error;
        continue;
      }
      const { attemptId, attempt } = landed.made;
      const fields = logFields(job, landed.query, ctx);
      if (!attempt.ok) {
        // Every failed lane is audited and counted, not only the first.
        const error = await failedAttempt(deps, attemptId, attempt.record, attempt.cause, landed.call, ctx, fields);
        failure ??= error;
        continue;
      }
      const events = attempt.result.events ?? [];
      const step = advance(
        frontier,
        { events: events.map((e) => ({ id: e.id, timeMs: Date.parse(e.time) })) },
        landed.key,
      );
      // The read ends after the loop (deletions reconciled first): an answer only moves the frontier.
      const progress = { frontier: step.frontier, finish: null };
      const written = await durable(
        () => recordEarthquakeAnswer(db, attemptId, attempt.record, landed.call, events, step.saturated, progress),
        ctx,
        log,
      );
      deps.observer?.onCall(attempt.record, written.rowsWritten);
      // A floor raised is shared at once; one that held is refreshed once per job, not once per call.
      if (step.learned.answerSize > frontier.capFloor || !capShared)
        capShared = (await learnFromAnswer(deps, step, frontier.capFloor, attempt.record.finishedAt)) || capShared;
      tally(evidence, step);
      outcome.rowsWritten += written.rowsWritten;
      for (const note of step.notes)
        log.warn({ ...fields, note }, 'gateway truncation order contradicted; that part of the window is read again');
      log.info(
        {
          ...fields,
          outcome: attempt.record.outcome,
          units: attempt.record.units,
          returned: events.length,
          saturated: step.saturated,
          rowsWritten: written.rowsWritten,
          durationMs: attempt.record.durationMs,
          inFlight: flights.size,
        },
        'gateway call',
      );
      frontier = step.frontier;
      if (step.failure) failure ??= new GaveUpError(step.failure);
    }
  } finally {
    // Never leave a call running unobserved: its audit row must be completed before the job lets go.
    await Promise.allSettled(flights.values());
    await shareOrderEvidence(deps, evidence).catch((err: unknown) =>
      log.warn({ err }, 'could not share what was learned of the gateway'),
    );
  }
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the call threw, as it was thrown
  if (failure !== null) throw failure;
  outcome.deletions = await reconcileAfterRead(job, frontier, ctx, deps, backfillId);
  // Checks cut short (shutdown, a failed check) leave their candidates to the next read: the read still ends.
  const finish = frontier.unresolved.length > 0 ? PARTITION_STATE.partial : PARTITION_STATE.done;
  await durable(
    () =>
      finishRead(
        db,
        { ...job, jobId: ctx.jobId, attempt: ctx.attempt, purpose: 'finish', backfillId },
        finish,
        provenIntervals(frontier),
        new Date(),
      ),
    ctx,
    log,
  );
  if (finish === PARTITION_STATE.partial)
    log.warn(
      {
        stream: job.streamKey,
        window: job.partitionKey,
        unresolved: frontier.unresolved.map((r) => `${toRfc3339(r.lo)}/${toRfc3339(r.hi)}`),
      },
      'window partial: intervals no query could resolve',
    );
  return outcome;
}

/** Deletions of a read whose answers are all in; never fails the window (the next read tries again). */
async function reconcileAfterRead(
  job: EarthquakeWindowJob,
  f: Frontier,
  ctx: JobContext,
  deps: ProcessorDeps,
  backfillId: string | null,
): Promise<DeletionOutcome | null> {
  try {
    const proof = f.startedAtMs > 0 ? await lastAnswerOf(deps.db, job, new Date(f.startedAtMs)) : null;
    if (proof === null) return null;
    const d = await reconcileDeletions(job, f, proof, ctx, deps, backfillId);
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

/** One query on a call slot; whatever happens comes back as a value, so that other lanes go on. */
async function send(
  job: EarthquakeWindowJob,
  key: string,
  query: Query,
  ctx: JobContext,
  deps: ProcessorDeps,
  backfillId: string | null,
): Promise<Landed> {
  const call: CallContext = {
    streamKey: job.streamKey,
    partitionKey: job.partitionKey,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
    purpose: query.purpose,
    backfillId,
  };
  const release = ctx.lanes ? await ctx.lanes.slots.acquire() : () => undefined;
  try {
    const request = earthquakeRequest(job.filters, query);
    const made = await makeCall(
      deps,
      call,
      'earthquake',
      request,
      () => deps.gateway.queryEarthquakes(request, ctx.signal),
      ctx,
    );
    return { key, query, call, made };
  } catch (error) {
    return { key, query, error };
  } finally {
    release();
  }
}

function logFields(job: EarthquakeWindowJob, q: Query, ctx: JobContext) {
  return {
    operation: 'earthquake',
    stream: job.streamKey,
    window: job.partitionKey,
    query: `${toRfc3339(q.region.lo)}/${toRfc3339(q.region.hi)}`,
    purpose: q.purpose,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
  };
}
