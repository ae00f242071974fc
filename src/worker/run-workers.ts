/**
 * The BullMQ workers around the processors. Retries are counted per partition as failures in a
 * row without an answer recorded (progress resets the count), not as attempts in all, so a long
 * window survives any number of faults spread over its calls; the delay grows from that count by
 * BullMQ's own exponential backoff with jitter. Our own outages (PostgreSQL, Redis) never fail a
 * window: they back off until the services are back. A job is put back, not failed, at shutdown.
 */
import { Backoffs, DelayedError, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { settledWithin } from '../deadline.js';
import type * as z from 'zod';
import { markCancelled, markFailed } from '../db/partitions.js';
import { budgetRecheckDelayMs } from '../domain/budget.js';
import { OPERATION_NAMES, type Operation } from '../domain/spec.js';
import {
  BackfillCancelledError,
  BackfillPausedError,
  BudgetExhaustedError,
  GatewayError,
  GaveUpError,
  isConnectionError,
  isTransientConflict,
  PartitionBusyError,
  ShutdownError,
} from '../errors.js';
import { earthquakeWindowJobSchema, indicatorChunkJobSchema } from '../planning/work.js';
import { QUEUE_NAMES, queueTelemetry } from '../queue/queues.js';
import { ATTR, annotateActiveSpan } from '../telemetry/tracing.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { CallSlots } from './slots.js';
import { CLAIM_MS, claim, type Claim } from './claim.js';
import { processEarthquakeWindow } from './earthquake-window.js';
import { processIndicatorChunk } from './indicator-chunk.js';

export interface WorkerSettings {
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  operations?: readonly Operation[];
  /** Failed attempts in a row (no answer recorded between them) after which a partition fails. */
  failuresAllowed: number;
  retryBaseDelayMs: number;
  /**
   * Past `failuresAllowed` failures in a row, how long (since the first of them) a partition still
   * waits for a gateway that is away (GatewayError.gatewayAway) before it fails; 0: it fails then.
   */
  gatewayOutageGraceMs?: number;
  /**
   * Gateway calls one earthquake window may have in flight at once (WINDOW_LANES), within its share
   * of the call slots.
   */
  windowLanes?: number;
  /** How often a job held by a budget looks again (default 60 s); never later than the day turns. */
  budgetRecheckMs?: number;
  /** Cuts off the database statements running now: called once a close has passed its deadline. */
  interruptDb?: () => void;
}

export interface RunningWorkers {
  workers: Worker[];
  /** Stops new calls at once, lets calls in flight finish within `deadlineMs`, then cuts them off. */
  close(deadlineMs: number): Promise<{ cutOff: boolean }>;
}

type Processor<T> = (data: T, ctx: JobContext, deps: ProcessorDeps) => Promise<unknown>;

export const MAX_RETRY_DELAY_MS = 15 * 60_000;
/** While PostgreSQL or Redis is away, a job is tried again at least this often. */
export const OUTAGE_RETRY_MAX_MS = 10_000;
/** A crashed worker's job is taken over within about LOCK_MS + STALLED_CHECK_MS (the lock renews every LOCK_MS / 2). */
export const LOCK_MS = 10_000;
export const STALLED_CHECK_MS = 5_000;
/** How long a closing worker waits for its Redis connections to be set up (see close()). */
const READY_WAIT_MS = 5_000;
/** After the deadline aborted the calls in flight, how long their jobs get to be put back before a forced close. */
const ABORT_GRACE_MS = 2_000;

/** BullMQ's exponential strategy with jitter: between half and all of base x 2^(n-1). */
const JITTER = 0.5;

/**
 * BullMQ's exponential backoff with jitter (so that workers hit by one outage do not retry in step),
 * fed with the failures in a row instead of BullMQ's attempts in all, and capped.
 */
export function retryDelayMs(failuresInRow: number, baseMs: number): number {
  const n = Math.min(30, Math.max(1, failuresInRow));
  const ms = Backoffs.builtinStrategies.exponential!(Math.min(baseMs, MAX_RETRY_DELAY_MS), JITTER)(n);
  // The built-in strategies answer synchronously; a promise would only come from a custom one.
  return Math.min(MAX_RETRY_DELAY_MS, typeof ms === 'number' ? ms : MAX_RETRY_DELAY_MS);
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

interface Shared {
  settings: WorkerSettings;
  deps: ProcessorDeps;
  inFlight: Set<AbortController>;
  stopping: () => boolean;
  /** Failures not counted in the database (our own outages, bugs), per job, in this process. */
  localFailures: Map<string, number>;
  slots: CallSlots;
  /** Operations a liveness probe last found silent (JobContext.silentOperations). */
  silentOperations: Set<Operation>;
}

/**
 * `hold`: put back delayed, nothing counted (a budget is used up). `drop`: the job ends quietly, its
 * partition left as it is (a paused backfill; resuming queues it again). `cancel`: the partition is
 * marked cancelled and the job ends quietly.
 */
export type Outcome =
  | { kind: 'requeue'; delayMs: number }
  | { kind: 'hold'; delayMs: number }
  | { kind: 'drop' }
  | { kind: 'cancel'; reason: string }
  | { kind: 'rate-limit'; delayMs: number }
  | { kind: 'fail'; kind2: string; reason: string };

/**
 * Pure: a job stopped at a call boundary by its backfill's control or a budget; none of them is a
 * failure of the partition, so nothing is counted against it. Null for any other error.
 */
export function controlOutcome(
  e: unknown,
  nowMs: number,
  budgetRecheckMs?: number,
): Extract<Outcome, { kind: 'hold' | 'drop' | 'cancel' }> | null {
  if (e instanceof BudgetExhaustedError)
    return { kind: 'hold', delayMs: budgetRecheckDelayMs(e.until?.getTime() ?? null, nowMs, budgetRecheckMs) };
  if (e instanceof BackfillPausedError) return { kind: 'drop' };
  if (e instanceof BackfillCancelledError) return { kind: 'cancel', reason: e.message };
  return null;
}

/**
 * How long a worker takes no job after a 429: its Retry-After, up to the longest backoff. A
 * Retry-After of days (a quota's "tomorrow") would hold every job of the queue that long; asking
 * again every 15 minutes costs an unbilled refusal each time.
 */
export function rateLimitDelayMs(retryAfterMs: number): number {
  return Math.min(Math.max(0, retryAfterMs), MAX_RETRY_DELAY_MS);
}

/**
 * The wait after a failed call: the backoff, or the failure's own Retry-After when longer (a 503
 * may say how long the gateway expects to be away), capped like a 429's.
 */
export function failureDelayMs(failuresInRow: number, baseMs: number, retryAfterMs: number | null): number {
  return Math.max(retryDelayMs(failuresInRow, baseMs), retryAfterMs === null ? 0 : rateLimitDelayMs(retryAfterMs));
}

/** A gateway away past the failures allowed is asked again within this, so work resumes soon after it is back. */
export const GATEWAY_AWAY_RETRY_MAX_MS = 2 * 60_000;

/**
 * A gateway away (no answer, a 5xx: GatewayError.gatewayAway) for less than `graceMs` since the
 * partition's last answer is waited out past the failures allowed in a row: an outage of the
 * gateway, like one of our own, says nothing against the window. Bounded: past the grace such a
 * failure counts like any other.
 */
export function ridesOut(e: GatewayError, graceMs: number): boolean {
  return e.gatewayAway && (e.details.failingForMs ?? Infinity) < graceMs;
}

/**
 * The wait of a partition riding out a gateway away: the last allowed failure's backoff, capped at
 * GATEWAY_AWAY_RETRY_MAX_MS so that the work resumes soon after the gateway is back, or the
 * failure's own Retry-After when longer.
 */
function awayDelayMs(failuresAllowed: number, baseMs: number, e: GatewayError): number {
  // Jittered again below the cap, so that the windows it holds do not all ask again in step.
  const backoff =
    Math.min(GATEWAY_AWAY_RETRY_MAX_MS, retryDelayMs(failuresAllowed, baseMs)) * (0.5 + Math.random() / 2);
  return Math.max(backoff, e.retryAfterMs === null ? 0 : rateLimitDelayMs(e.retryAfterMs));
}

/** A refusal the gateway's clock explains is asked again at most this long after: time fixes it. */
export const CLOCK_RETRY_MAX_MS = 60_000;

/**
 * The wait after a refusal the gateway's clock explains: the backoff, capped at CLOCK_RETRY_MAX_MS,
 * never a reason to fail. Its bound is `clockBound`'s: once the request starts further back than a
 * clock may be behind, a refusal counts as any other.
 */
function clockDelay(job: Job, s: Shared): number {
  const key = job.id ?? '';
  const n = (s.localFailures.get(key) ?? 0) + 1;
  s.localFailures.set(key, n);
  // Grown over the first few refusals only: a clock minutes behind is asked again within a minute.
  return Math.min(CLOCK_RETRY_MAX_MS, retryDelayMs(Math.min(n, 6), s.settings.retryBaseDelayMs));
}

/** What to do with a job whose processor threw `e`. Pure but for the local failure counts. */
function decide(e: unknown, job: Job, s: Shared, cutOff: boolean): Outcome {
  // Before shutdown: a job its backfill stopped is dropped or cancelled even by a worker that is stopping.
  const stopped = controlOutcome(e, Date.now(), s.settings.budgetRecheckMs);
  if (stopped) return stopped;
  if (e instanceof PartitionBusyError) return { kind: 'hold', delayMs: CLAIM_MS };
  if (e instanceof ShutdownError || cutOff || s.stopping()) return { kind: 'requeue', delayMs: 0 };
  if (e instanceof GatewayError && e.kind === 'rate_limited' && e.retryAfterMs !== null)
    return { kind: 'rate-limit', delayMs: rateLimitDelayMs(e.retryAfterMs) };
  if (e instanceof GaveUpError) return { kind: 'fail', kind2: 'gave_up', reason: e.message };
  if (e instanceof GatewayError && !e.retryable) return { kind: 'fail', kind2: e.kind, reason: e.message };
  if (e instanceof GatewayError && e.details.clockBound === true)
    return { kind: 'requeue', delayMs: clockDelay(job, s) };
  if (e instanceof GatewayError && e.failuresInRow > 0) {
    if (e.failuresInRow >= s.settings.failuresAllowed && ridesOut(e, s.settings.gatewayOutageGraceMs ?? 0)) {
      return { kind: 'requeue', delayMs: awayDelayMs(s.settings.failuresAllowed, s.settings.retryBaseDelayMs, e) };
    }
    if (e.failuresInRow >= s.settings.failuresAllowed) {
      return {
        kind: 'fail',
        kind2: e.kind,
        reason: `${e.failuresInRow} failed attempts in a row without an answer; last: ${e.message}`,
      };
    }
    return { kind: 'requeue', delayMs: failureDelayMs(e.failuresInRow, s.settings.retryBaseDelayMs, e.retryAfterMs) };
  }
  const key = job.id ?? '';
  const n = (s.localFailures.get(key) ?? 0) + 1;
  s.localFailures.set(key, n);
  // Our own database or Redis being away, or a transaction losing to a concurrent one, never fails
  // a window; anything else is counted like the gateway's faults.
  const ours = isConnectionError(e) || isTransientConflict(e);
  if (!ours && n >= s.settings.failuresAllowed) return { kind: 'fail', kind2: 'internal', reason: describe(e) };
  // Our own outage costs no gateway call: try again soon, so the work resumes shortly after it ends.
  const delayMs = retryDelayMs(n, s.settings.retryBaseDelayMs);
  return { kind: 'requeue', delayMs: ours ? Math.min(delayMs, OUTAGE_RETRY_MAX_MS) : delayMs };
}

async function act(
  outcome: Outcome,
  e: unknown,
  job: Job,
  token: string | undefined,
  worker: Worker,
  partition: { streamKey: string; partitionKey: string },
  s: Shared,
): Promise<unknown> {
  if (outcome.kind === 'drop') return { stopped: 'paused' };
  if (outcome.kind === 'cancel') {
    // Not marked (the database away): the error ends the attempt and BullMQ's backoff runs it again,
    // which stops at its first call boundary and marks it then.
    await markCancelled(s.deps.db, [partition], outcome.reason);
    return { stopped: 'cancelled' };
  }
  if (outcome.kind === 'rate-limit') {
    await worker.rateLimit(outcome.delayMs);
    throw Worker.RateLimitError(); // back to waiting, nothing counted
  }
  if (outcome.kind === 'fail') {
    await markFailed(s.deps.db, partition, outcome.reason, outcome.kind2).catch((dbError: unknown) =>
      s.deps.log.error({ err: dbError }, 'could not mark partition failed; the queue reconciler will retry it'),
    );
    throw Object.assign(new UnrecoverableError(outcome.reason), { cause: e });
  }
  try {
    await job.moveToDelayed(Date.now() + outcome.delayMs, token);
  } catch {
    throw e; // Redis is away too: BullMQ retries the job once it is back (its lock expires)
  }
  throw new DelayedError();
}

function wrap<T extends { streamKey: string; partitionKey: string }>(
  schema: z.ZodType<T>,
  processor: Processor<T>,
  s: Shared,
  worker: () => Worker,
) {
  const run = async (job: Job, token?: string): Promise<unknown> => {
    const parsed = schema.safeParse(job.data);
    if (!parsed.success)
      throw new UnrecoverableError(
        `invalid job payload: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    // BullMQ runs the processor inside the job's span: which partition it is, for finding it in a trace.
    annotateActiveSpan({ [ATTR.streamKey]: parsed.data.streamKey, [ATTR.partitionKey]: parsed.data.partitionKey });
    const controller = new AbortController();
    s.inFlight.add(controller);
    const leave = s.slots.enter();
    let held: Claim | null = null;
    const ctx: JobContext = {
      jobId: job.id ?? null,
      attempt: job.attemptsMade + 1,
      signal: controller.signal,
      // No new call once shutdown began, or once another run took the partition over.
      stopping: () => s.stopping() || (held?.lost() ?? false),
      lanes: { slots: s.slots, max: s.settings.windowLanes ?? 1 },
      ...((s.settings.gatewayOutageGraceMs ?? 0) > 0 && {
        // From the first: an unanswered probe marks the gateway silent, and the queries after it wait behind probes.
        probeTimeoutsFrom: 1,
        silentOperations: s.silentOperations,
      }),
    };
    try {
      held = await claim(s.deps.db, parsed.data, s.deps.log);
      if (!held) throw new PartitionBusyError(parsed.data);
      const result = await processor(parsed.data, ctx, s.deps);
      s.localFailures.delete(job.id ?? '');
      return result;
    } catch (e) {
      const outcome = decide(e, job, s, controller.signal.aborted);
      if (outcome.kind === 'requeue' && !(e instanceof ShutdownError))
        s.deps.log.warn({ jobId: job.id, err: describe(e), retryInMs: outcome.delayMs }, 'job put back');
      if (outcome.kind === 'hold')
        s.deps.log.info({ jobId: job.id, reason: describe(e), recheckInMs: outcome.delayMs }, 'job held');
      if (outcome.kind === 'drop' || outcome.kind === 'cancel')
        s.deps.log.info({ jobId: job.id, reason: describe(e) }, 'job stopped by its backfill');
      // The partition is let go before its job is put back, or the job's next run finds it still claimed.
      await held?.release();
      held = null;
      // Awaited here: `finally` awaits too, and a bare `return` would leave act's rejection unheard meanwhile.
      return await act(outcome, e, job, token, worker(), parsed.data, s);
    } finally {
      leave();
      s.inFlight.delete(controller);
      await held?.release();
    }
  };
  return run;
}

export function startWorkers(settings: WorkerSettings, deps: ProcessorDeps): RunningWorkers {
  let stopping = false;
  const s: Shared = {
    settings,
    deps,
    inFlight: new Set(),
    stopping: () => stopping,
    localFailures: new Map(),
    slots: new CallSlots(settings.concurrency),
    silentOperations: new Set(),
  };
  const processor = (op: Operation, self: () => Worker) =>
    op === 'earthquake'
      ? wrap(earthquakeWindowJobSchema, processEarthquakeWindow, s, self)
      : wrap(indicatorChunkJobSchema, processIndicatorChunk, s, self);
  const workers = (settings.operations ?? OPERATION_NAMES).map((op) => {
    const worker: Worker = new Worker(
      QUEUE_NAMES[op],
      processor(op, () => worker),
      {
        connection: settings.connection,
        prefix: settings.prefix,
        concurrency: settings.concurrency,
        lockDuration: LOCK_MS,
        stalledInterval: STALLED_CHECK_MS,
        // No limit of our own: BullMQ honours a manual rateLimit() (a 429's Retry-After) across every
        // worker of the queue only when a limiter is configured.
        limiter: { max: 1_000_000, duration: 1_000 },
        // A job whose worker died is taken over, however often that happens; never failed unrun.
        maxStalledCount: 1_000_000,
        telemetry: queueTelemetry(),
      },
    );
    worker.on('error', (err) => deps.log.error({ err, queue: op }, 'worker error'));
    worker.on('failed', (job, err) => deps.log.warn({ jobId: job?.id, queue: op, err: err.message }, 'job failed'));
    return worker;
  });
  return {
    workers,
    async close(deadlineMs) {
      stopping = true;
      const started = Date.now();
      const left = () => Math.max(0, deadlineMs - (Date.now() - started));
      // BullMQ ends the process when a worker closes while its Redis connections are still being set
      // up (their listeners go before the set-up's rejection comes: an unheard 'error'), as a run with
      // nothing to do would: wait for them first, within the deadline.
      const ready = Promise.all(workers.map((w) => w.waitUntilReady().catch(() => undefined)));
      await settledWithin(ready, Math.min(left(), READY_WAIT_MS));
      // BullMQ's close rejects with a job's error when one ends while it closes (a job put back):
      // that is an ending too, and unheard it would end the process.
      const graceful = Promise.all(workers.map((w) => w.close())).then(
        () => undefined,
        (err: unknown) => deps.log.debug({ err: describe(err) }, 'a job ended while the workers closed'),
      );
      const cutOff = !(await settledWithin(graceful, left()));
      if (cutOff) {
        for (const c of s.inFlight) c.abort(new Error('shutdown deadline reached'));
        // A job stuck on a silent database would outlive any deadline: its statement is cut off too,
        // so the job ends as an outage and goes back through BullMQ while Redis is still open.
        settings.interruptDb?.();
        await settledWithin(graceful, ABORT_GRACE_MS);
      }
      return { cutOff };
    },
  };
}
