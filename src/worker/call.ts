/**
 * One gateway call as a worker makes it. Nothing is sent unless its audit row was written first
 * (while PostgreSQL is down, nothing is called), no new call starts once shutdown began, and a
 * call cut off at the shutdown deadline is recorded as billed unknown, never as unbilled.
 *
 * Each call is also a control point: no call starts for a paused or cancelled backfill, and none
 * that a budget (BILLED_CALLS_PER_DAY, the backfill's --max-billed-calls) would not cover. The
 * budget unit is reserved in the same transaction as the audit row, so every audited call holds
 * one; it is given back when the answer turns out unbilled, and kept when billed or unknown.
 */
import {
  abandonAttempt,
  beginAttempt,
  billedOf,
  completeAttempt,
  discardAttempt,
  markAttemptRefused,
  markAttemptUnknown,
  type CallContext,
} from '../db/audit.js';
import { commitFailedAttempt, type FailureStreak } from '../db/answers.js';
import { releaseBudget } from '../db/budget.js';
import { BACKFILL_CONTROL, type BackfillControl } from '../domain/backfill.js';
import { backfillBudgetScope, budgetScopes, refusalOf, type BudgetScope } from '../domain/budget.js';
import type { Operation } from '../domain/spec.js';
import {
  BackfillCancelledError,
  BackfillPausedError,
  BudgetExhaustedError,
  GatewayError,
  isConnectionError,
  ShutdownError,
} from '../errors.js';
import type { Attempt, AttemptRecord } from '../gateway/attempt.js';
import type { EarthquakeRequest, EarthquakeResult } from '../gateway/schemas.js';
import { attemptError, LIVENESS_REQUESTS } from '../gateway/client.js';
import { traceGatewayCall } from '../telemetry/tracing.js';
import { durable } from './durable.js';
import type { JobContext, ProcessorDeps } from './deps.js';

export interface Call<R> {
  attemptId: number;
  attempt: Attempt<R>;
}

/** Pure: the error that stops a call of a paused or cancelled backfill, or null when it may go on. */
export function controlStop(backfillId: string | null, control: BackfillControl | null): Error | null {
  if (backfillId === null || control === null) return null;
  if (control === BACKFILL_CONTROL.paused) return new BackfillPausedError(backfillId);
  if (control === BACKFILL_CONTROL.cancelled) return new BackfillCancelledError(backfillId);
  return null;
}

/** Pure: what a refused reservation means for the job: wait for the next UTC day, or for a raised cap. */
export function budgetError(refused: BudgetScope, nowMs: number): BudgetExhaustedError {
  const r = refusalOf(refused, nowMs);
  return r.scope === 'day'
    ? new BudgetExhaustedError('day', r.cap, new Date(r.untilMs), null)
    : new BudgetExhaustedError('backfill', r.cap, null, r.backfillId);
}

export async function makeCall<R>(
  deps: ProcessorDeps,
  call: CallContext,
  operation: Operation,
  request: object,
  send: () => Promise<Attempt<R>>,
  ctx: JobContext,
  /** Whether the gateway billed an attempt, as far as is known (null: unknown, its budget unit kept). */
  billed: (r: AttemptRecord) => boolean | null = billedOf,
): Promise<Call<R>> {
  const backfillId = call.backfillId ?? null;
  const nowMs = Date.now();
  const dayScopes = budgetScopes(nowMs, deps.budget?.billedCallsPerDay ?? null, null);
  // Control, budget units and the audit row in one statement: reserved with the audit row or not at all.
  const startedAt = new Date();
  const begun = await beginAttempt(deps.db, dayScopes, operation, request, call, startedAt, backfillId).catch(
    async (e: unknown) => {
      // The statement may have committed while its answer was lost: that row's call is never sent.
      if (isConnectionError(e)) {
        const scopes = backfillId === null ? dayScopes : [...dayScopes, backfillBudgetScope(backfillId)];
        await durable(() => abandonAttempt(deps.db, call, startedAt, scopes), ctx, deps.log);
      }
      throw e;
    },
  );
  // Control first: a job of a cancelled backfill that stops with its worker marks its partition
  // cancelled, rather than going back to the queue half done.
  const stop = controlStop(backfillId, begun.gate?.control ?? null);
  if (stop) throw stop;
  if (begun.refused) throw budgetError(begun.refused, nowMs);
  const { attemptId, scopes } = begun;
  if (attemptId === null) throw new Error('an attempt was neither begun nor refused');
  // A worker stopping sends nothing (checked after the control, which decides how the job ends).
  if (ctx.stopping?.()) {
    await discardAttempt(deps.db, attemptId);
    await releaseBudget(deps.db, scopes);
    throw new ShutdownError('the worker is stopping: no new gateway call');
  }
  const traced = { purpose: call.purpose, attemptId, streamKey: call.streamKey, partitionKey: call.partitionKey };
  const attempt = await traceGatewayCall(operation, traced, send).catch(async (e: unknown) => {
    // Refused before sending (the request broke the spec): nothing left this process.
    if (e instanceof GatewayError) {
      await markAttemptRefused(deps.db, attemptId, e.message);
      await releaseBudget(deps.db, scopes);
    }
    throw e;
  });
  if (!attempt.ok && ctx.signal?.aborted) {
    await durable(
      () =>
        markAttemptUnknown(
          deps.db,
          attemptId,
          'cut off at the shutdown deadline before the answer came: the gateway may have billed it',
        ),
      ctx,
      deps.log,
    );
    throw new ShutdownError('cut off at the shutdown deadline');
  }
  // An HTTP answer, whatever its status, shows the gateway is there again: its queries need no probe before them.
  if (attempt.record.httpStatus !== null) ctx.silentOperations?.delete(operation);
  // Known unbilled (an error answer, an outcome other than succeeded): the unit goes back.
  if (billed(attempt.record) === false) await durable(() => releaseBudget(deps.db, scopes), ctx, deps.log);
  return { attemptId, attempt };
}

/**
 * A failed attempt is audited and observed like any call, then turned into the error the retry
 * layer acts on, carrying the partition's failures in a row. Returned for the caller to throw.
 */
export async function failedAttempt(
  deps: ProcessorDeps,
  attemptId: number,
  record: AttemptRecord,
  cause: unknown,
  call: CallContext,
  ctx: JobContext,
  logFields: Record<string, unknown>,
): Promise<GatewayError> {
  const streak = await durable(() => commitFailedAttempt(deps.db, attemptId, record, call), ctx, deps.log);
  deps.observer?.onCall(record, 0);
  const { outcome, errorKind, httpStatus, durationMs } = record;
  const { failuresInRow } = streak;
  deps.log.warn({ ...logFields, outcome, errorKind, httpStatus, durationMs, failuresInRow }, 'gateway call failed');
  const error = attemptError(record, cause);
  const probe = probesAfter(record, failuresInRow, ctx)
    ? (await probeLiveness(deps, call, record.operation, ctx)).record
    : null;
  const silent = probe !== null && probe.httpStatus === null;
  const message = probe === null ? error.message : `${error.message}; ${livenessText(probe)}`;
  return new GatewayError(error.kind, message, { ...error.details, ...streak, gatewaySilent: silent });
}

/** What a liveness probe says of a timeout, for the partition's last error. */
function livenessText(probe: AttemptRecord): string {
  if (probe.httpStatus === null)
    return 'a request every gateway refuses got no answer either: the gateway is not answering';
  return (
    `the gateway answered a liveness probe (HTTP ${probe.httpStatus} in ${probe.durationMs} ms), so it is there and ` +
    'this query takes longer than it is waited for: raise GATEWAY_TIMEOUT_MS if the gateway is known to be this slow'
  );
}

/**
 * A liveness probe is billed only if the gateway says it succeeded: what it asks must be refused, and
 * a refusal is never billed, so one that got no answer was not billed either, and keeps no budget unit.
 */
const probeBilled = (r: AttemptRecord): boolean => r.billed;

/** `call_purpose` of a liveness probe's audit row. */
export const LIVENESS_PURPOSE = 'liveness';

/**
 * Pure: whether a failure is followed by a liveness probe: a timeout with no HTTP answer, once the
 * partition's failures in a row reach `probeTimeoutsFrom` (the workers probe from the first: a probe
 * is never billed, and one unanswered spares the queries after it).
 */
export function probesAfter(record: AttemptRecord, failuresInRow: number, ctx: JobContext): boolean {
  if (record.errorKind !== 'timeout' || record.httpStatus !== null) return false;
  return ctx.probeTimeoutsFrom !== undefined && failuresInRow >= ctx.probeTimeoutsFrom;
}

/**
 * Asks the gateway what it must refuse (LIVENESS_REQUESTS: never billed), audited like every call.
 * No HTTP answer within GATEWAY_TIMEOUT_MS: the gateway is not answering at all, so a query's timeout
 * says nothing against its window and is waited out, and the operation is marked silent. A probe
 * after a query moves no partition; one sent instead of a query (`instead`) counts for it when
 * unanswered, and its streak is returned.
 */
async function probeLiveness(
  deps: ProcessorDeps,
  call: CallContext,
  operation: Operation,
  ctx: JobContext,
  instead = false,
): Promise<{ record: AttemptRecord; streak: FailureStreak | null }> {
  const release = ctx.lanes ? await ctx.lanes.slots.acquire() : () => undefined;
  try {
    const probe = { ...call, purpose: LIVENESS_PURPOSE };
    const request = LIVENESS_REQUESTS[operation];
    const send = () => deps.gateway.probeLiveness(operation, ctx.signal);
    const { attemptId, attempt } = await makeCall(deps, probe, operation, request, send, ctx, probeBilled);
    const { record } = attempt;
    const silent = record.httpStatus === null;
    const streak =
      instead && silent
        ? await durable(() => commitFailedAttempt(deps.db, attemptId, record, probe, probeBilled), ctx, deps.log)
        : null;
    if (streak === null) await durable(() => completeAttempt(deps.db, attemptId, record, probeBilled), ctx, deps.log);
    if (silent) ctx.silentOperations?.add(operation);
    deps.observer?.onLivenessProbe?.(record);
    const { httpStatus, errorKind, durationMs } = record;
    deps.log.warn(
      { streamKey: call.streamKey, partitionKey: call.partitionKey, httpStatus, errorKind, durationMs },
      silent ? 'liveness probe got no answer: the gateway is not answering, waited out' : 'liveness probe answered',
    );
    return { record, streak };
  } finally {
    release();
  }
}

/**
 * While a probe last found the gateway silent, a query waits behind another probe: one unanswered
 * fails the attempt in its place, unbilled, so that waiting out a silent gateway sends no query whose
 * answer may be billed and lost. An answered probe lets the query go.
 */
export async function unlessSilent(
  deps: ProcessorDeps,
  call: CallContext,
  operation: Operation,
  ctx: JobContext,
): Promise<void> {
  if (ctx.silentOperations?.has(operation) !== true) return;
  const { record, streak } = await probeLiveness(deps, call, operation, ctx, true);
  if (streak === null) return;
  const message =
    `the gateway is not answering: a liveness probe sent before the query got no answer in ${record.durationMs} ms, ` +
    'so the query was not sent';
  // Its own kind: a timeout, or a connection refused where the gateway went from silent to closed.
  throw new GatewayError(record.errorKind ?? 'timeout', message, { httpStatus: null, ...streak, gatewaySilent: true });
}

/** The audit context of a call a window's job makes, for `purpose`. */
export function jobCall(
  job: { streamKey: string; partitionKey: string },
  ctx: JobContext,
  purpose: string,
  backfillId: string | null,
): CallContext {
  return {
    streamKey: job.streamKey,
    partitionKey: job.partitionKey,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
    purpose,
    backfillId,
  };
}

/**
 * An earthquake query through makeCall, holding one of the process's call slots while it is out
 * (WORKER_CONCURRENCY holds).
 */
export async function earthquakeCall(
  deps: ProcessorDeps,
  call: CallContext,
  request: EarthquakeRequest,
  ctx: JobContext,
): Promise<Call<EarthquakeResult>> {
  await unlessSilent(deps, call, 'earthquake', ctx);
  const release = ctx.lanes ? await ctx.lanes.slots.acquire() : () => undefined;
  try {
    return await makeCall(
      deps,
      call,
      'earthquake',
      request,
      () => deps.gateway.queryEarthquakes(request, ctx.signal),
      ctx,
    );
  } finally {
    release();
  }
}
