/**
 * What a window starts from, learned from earlier windows of every worker: a proven floor under
 * the gateway's cap and a hint about its truncation order. When the floor is not known to be
 * max_results, one probe (an unfiltered month, which on a real catalog holds far more than a cap
 * of events) measures it, at most once per GATEWAY_KNOWLEDGE_TTL_MS per gateway.
 */
import { commitAnswer } from '../db/answers.js';
import {
  earthquakeGatewayKey,
  readGatewayFacts,
  recordAnswerSize,
  recordOrderEvidence,
  recordProbe,
  type OrderStats,
} from '../db/gateway-knowledge.js';
import { DAY_MS } from '../domain/time.js';
import { MAX_RESULTS, probeRequest } from '../planning/earthquake-request.js';
import { preferOf, type Step, type WindowKnowledge } from '../planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../planning/work.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { earthquakeCall, failedAttempt, jobCall } from './call.js';
import { durable } from './durable.js';
import { windowPriors } from './window-priors.js';

/** A window this long without filters proves the cap on its own first answer; shorter ones, or filtered ones, probe. */
const SELF_PROVING_MS = 7 * DAY_MS;
/** Share of windows that walk under an order guess although the hint says the gateway keeps none: gateways change. */
const EXPLORE = 0.1;

function gatewayKey(deps: ProcessorDeps): string {
  return earthquakeGatewayKey(deps.gateway.baseUrl);
}

async function probeCap(
  deps: ProcessorDeps,
  job: EarthquakeWindowJob,
  ctx: JobContext,
  backfillId: string | null,
): Promise<number> {
  // Made for the window's backfill: its control and budget apply to the probe like to any call.
  const call = jobCall(job, ctx, 'cap-probe', backfillId);
  const { attemptId, attempt } = await earthquakeCall(deps, call, probeRequest({ endMs: job.windowEndMs }), ctx);
  if (!attempt.ok)
    throw await failedAttempt(deps, attemptId, attempt.record, attempt.cause, call, ctx, {
      operation: 'earthquake',
      stream: job.streamKey,
      purpose: 'cap-probe',
    });
  const size = (attempt.result.events ?? []).length;
  // The probe's events are outside the stream's filters and window: audited and billed, not stored.
  await durable(
    () => commitAnswer(deps.db, attemptId, attempt.record, call, size >= MAX_RESULTS, async () => 0, 'answered'),
    ctx,
    deps.log,
  );
  deps.observer?.onCall(attempt.record, 0);
  await recordProbe(deps.db, gatewayKey(deps), attempt.record.finishedAt);
  await recordAnswerSize(deps.db, gatewayKey(deps), size, attempt.record.finishedAt, deps.knowledgeTtlMs);
  deps.log.info({ operation: 'earthquake', stream: job.streamKey, answerSize: size }, 'gateway cap probed');
  return size;
}

export async function windowKnowledge(
  deps: ProcessorDeps,
  job: EarthquakeWindowJob,
  ctx: JobContext,
  backfillId: string | null = null,
): Promise<WindowKnowledge> {
  const facts = await readGatewayFacts(deps.db, gatewayKey(deps), Date.now(), deps.knowledgeTtlMs);
  const filtered = job.filters.minMagnitude !== null || job.filters.circle !== null;
  const short = job.windowEndMs - job.windowStartMs < SELF_PROVING_MS;
  let capFloor = facts.capFloor;
  if (capFloor < MAX_RESULTS && !facts.probedRecently && (filtered || short))
    capFloor = Math.max(capFloor, await probeCap(deps, job, ctx, backfillId));
  const hinted = preferOf(facts.orderStats);
  const prefer = hinted === 'walk' && Math.random() < EXPLORE ? 'newest' : hinted;
  return { capFloor, prefer, circleCuts: job.filters.circle === null, ...(await windowPriors(deps.db, job)) };
}

/** After an answer: a floor raised or confirmed is shared. True when it was written. */
export async function learnFromAnswer(
  deps: ProcessorDeps,
  step: Step,
  capFloorBefore: number,
  at: Date,
): Promise<boolean> {
  if (step.learned.answerSize < capFloorBefore || step.learned.answerSize <= 1) return false;
  await recordAnswerSize(deps.db, gatewayKey(deps), step.learned.answerSize, at, deps.knowledgeTtlMs);
  return true;
}

export function emptyStats(): OrderStats {
  return { newest: { confirmed: 0, refuted: 0 }, oldest: { confirmed: 0, refuted: 0 } };
}

export function tally(stats: OrderStats, step: Step): void {
  for (const d of step.learned.confirmed) stats[d].confirmed++;
  for (const d of step.learned.refuted) stats[d].refuted++;
}

export async function shareOrderEvidence(deps: ProcessorDeps, stats: OrderStats): Promise<void> {
  const outcomes = stats.newest.confirmed + stats.newest.refuted + stats.oldest.confirmed + stats.oldest.refuted;
  if (outcomes > 0) await recordOrderEvidence(deps.db, gatewayKey(deps), stats);
}
