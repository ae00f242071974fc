/**
 * What a window read tells every other reader of the gateway (gateway_knowledge): a cap floor
 * raised or confirmed by an answer (with the region it was seen in), a cap probe's size, how often
 * each order guess held, and how much of the stored events a re-read counted again was new.
 */
import {
  earthquakeGatewayKey,
  readGatewayFacts,
  recordAnswerSize,
  recordOrderEvidence,
  recordMeasuredCap,
  recordRecount,
  type GatewayFacts,
  type OrderStats,
} from '../db/gateway-knowledge.js';
import type { Recount, Region, Step } from '../planning/truncation/index.js';
import type { ProcessorDeps } from './deps.js';

export function gatewayKey(deps: ProcessorDeps): string {
  return earthquakeGatewayKey(deps.gateway.baseUrl);
}

export function sharedFacts(deps: ProcessorDeps): Promise<GatewayFacts> {
  return readGatewayFacts(deps.db, gatewayKey(deps), Date.now(), deps.knowledgeTtlMs);
}

/**
 * After an answer to `region`: a floor raised or confirmed is shared, and a cap probes measured.
 * True when the floor was written.
 */
export async function learnFromAnswer(
  deps: ProcessorDeps,
  step: Step,
  region: Region,
  capFloorBefore: number,
  at: Date,
): Promise<boolean> {
  if (step.learned.measured !== null) await recordMeasuredCap(deps.db, gatewayKey(deps), step.learned.measured, at);
  const size = step.learned.answerSize;
  if (size < capFloorBefore || size <= 1) return false;
  await recordAnswerSize(deps.db, gatewayKey(deps), { size, region }, at, deps.knowledgeTtlMs);
  return true;
}

export function emptyStats(): OrderStats {
  return { newest: { confirmed: 0, refuted: 0 }, oldest: { confirmed: 0, refuted: 0 } };
}

export function tally(stats: OrderStats, step: Step): void {
  for (const d of step.learned.confirmed) stats[d].confirmed++;
  for (const d of step.learned.refuted) stats[d].refuted++;
}

async function shareOrderEvidence(deps: ProcessorDeps, stats: OrderStats): Promise<void> {
  const outcomes = stats.newest.confirmed + stats.newest.refuted + stats.oldest.confirmed + stats.oldest.refuted;
  if (outcomes > 0) await recordOrderEvidence(deps.db, gatewayKey(deps), stats);
}

/** What this job's answers counted again of the stored events (`before`: the frontier's when the job began). */
async function shareRecount(deps: ProcessorDeps, before: Recount, after: Recount): Promise<void> {
  const stored = after.stored - before.stored;
  if (stored <= 0) return;
  const recount = { stored, added: after.added - before.added };
  await recordRecount(deps.db, gatewayKey(deps), recount, new Date(), deps.knowledgeTtlMs);
}

/**
 * What a job learned of the gateway, shared when it stops: its order evidence and its recount, each
 * on its own, so that one that could not be written keeps the other from nothing. Never throws.
 */
export async function shareLearned(
  deps: ProcessorDeps,
  evidence: OrderStats,
  recount: { before: Recount; after: Recount },
): Promise<void> {
  const shares = [() => shareOrderEvidence(deps, evidence), () => shareRecount(deps, recount.before, recount.after)];
  for (const share of shares)
    await share().catch((err: unknown) => deps.log.warn({ err }, 'could not share what was learned of the gateway'));
}
