/**
 * Chains: under the hypothesis that the gateway keeps the newest (or oldest) events when it
 * truncates, a saturated answer vouches for everything past its last event, and the next query
 * only needs the rest, overlapping the answer by enough events to check the hypothesis there.
 *
 * Everything here works in chain coordinates, where "newest" is larger: for an oldest-first
 * chain, times are negated, so one piece of code walks both ways.
 */
import { secondAfter, secondBefore } from '../../domain/time.js';
import { neededChecks, riskTarget } from './evidence.js';
import {
  PRECISION_MS,
  knownIn,
  mergeEvents,
  surelyIn,
  type Claim,
  type Direction,
  type Region,
  type SeenEvent,
  type Task,
} from './frontier.js';

/** Share of the cap the last step of a chain is filled to with overlap: room for estimation error. */
const LAST_STEP_FILL = 0.8;
const BELOW_SHARE = 0.5;
const OVERLAP_MARGIN = 2;

const flipTime = (dir: Direction, t: number): number => (dir === 'newest' ? t : -t);
const toChainEvents = (dir: Direction, events: readonly SeenEvent[]): SeenEvent[] =>
  events.map((e) => ({ id: e.id, timeMs: flipTime(dir, e.timeMs) }));
const toChainRegion = (dir: Direction, r: Region): Region => (dir === 'newest' ? r : { lo: -r.hi, hi: -r.lo });
const fromChainRegion = toChainRegion;

export interface ChainContext {
  eventsSeen: number;
  nextClaim: number;
  /** The chain the answer belongs to; a new chain takes the claim's own id. */
  chain: number | null;
}

export interface ChainStart {
  claim: Claim;
  next: Extract<Task, { kind: 'chain' }>;
}

/**
 * How many of the answer's own events the next step should re-read to test the hypothesis. The
 * evidence is judged later against the events actually found below, so the estimate of those is
 * taken at half (density varies; catalogs have quiet stretches), plus a margin: a claim that falls
 * short costs a whole re-read, a few more overlapping events cost little.
 */
function overlapSize(size: number, expectedBelow: number, ctx: ChainContext): number {
  const expectedClaims = (ctx.eventsSeen + expectedBelow) / size + 2;
  const found = neededChecks(size, expectedBelow * BELOW_SHARE, riskTarget(expectedClaims));
  const needed = found === null ? null : found + OVERLAP_MARGIN;
  // The last step is paid for anyway: fill it with overlap, which makes the evidence stronger for free.
  const room = Math.floor(LAST_STEP_FILL * size - expectedBelow);
  if (needed !== null && room >= needed) return room;
  return needed ?? Math.min(size - 1, 20);
}

/**
 * A saturated answer `events` to `query`, read as the first step (or the next) of a `dir` chain.
 * Null when the answer gives no room to make progress (its events are all within seconds of the
 * query's far end): the caller falls back to splitting.
 */
export function startChain(dir: Direction, events: readonly SeenEvent[], query: Region, known: readonly SeenEvent[], ctx: ChainContext): ChainStart | 'inconsistent' | null {
  const region = toChainRegion(dir, query);
  const answer = toChainEvents(dir, events).sort((a, b) => a.timeMs - b.timeMs);
  const rMin = answer[0]!.timeMs;
  // Under the hypothesis the answer holds every event past its last one: an event seen before there refutes it.
  const got = new Set(events.map((e) => e.id));
  const lacking = toChainEvents(dir, known).filter((e) => !got.has(e.id) && surelyIn(e, region) && e.timeMs >= rMin + 2 * PRECISION_MS);
  if (lacking.length > 0) return 'inconsistent';
  const size = answer.length;
  const density = size / Math.max(1000, region.hi - rMin);
  const expectedBelow = density * Math.max(0, rMin - region.lo);
  const zoneFrom = rMin + 4 * PRECISION_MS;
  const first = answer.findIndex((e) => e.timeMs >= zoneFrom);
  if (first < 0) return null;
  const last = Math.min(size - 1, first + overlapSize(size, expectedBelow, ctx) - 1);
  const zoneTo = answer[last]!.timeMs;
  const nextHi = secondAfter(zoneTo + PRECISION_MS);
  if (nextHi >= region.hi) return null;
  const nextRegion = fromChainRegion(dir, { lo: region.lo, hi: nextHi });
  const all = mergeEvents(events, known);
  const claim: Claim = {
    id: ctx.nextClaim,
    chain: ctx.chain ?? ctx.nextClaim,
    dir,
    region: fromChainRegion(dir, { lo: secondBefore(rMin + PRECISION_MS), hi: region.hi }),
    query,
    size,
    known: all.filter((e) => surelyIn(e, query)).length,
    floor: rMin,
    below: 0,
    checked: 0,
    zone: { from: zoneFrom, to: zoneTo, ids: answer.slice(first, last + 1).map((e) => e.id) },
    status: 'open',
  };
  return { claim, next: { kind: 'chain', dir, region: nextRegion, known: knownIn(all, nextRegion), claim: claim.id } };
}

/** Fresh events that later steps found surely past the claim's last event, inside its query. */
export function countPast(claim: Claim, fresh: readonly SeenEvent[]): number {
  return toChainEvents(claim.dir, fresh.filter((e) => surelyIn(e, claim.query))).filter((e) => e.timeMs <= claim.floor - 2 * PRECISION_MS).length;
}

/**
 * `lacking`: the new answer misses events the hypothesis puts in it (it is not newest-first; the
 * previous claim may still hold). `intruder`: it holds an event the previous claim said there was
 * none of (that claim is false).
 */
export type ChainCheck = { consistent: true; checked: number } | { consistent: false; failed: 'lacking' | 'intruder'; reason: string };

/**
 * The next chain answer against what the previous one claimed. It must hold every known event
 * that the hypothesis puts in it, and no event in the previous answer's claimed part that the
 * previous answer lacked; the events of the overlap it confirms are the claim's evidence.
 */
export function checkChainStep(task: Extract<Task, { kind: 'chain' }>, claim: Claim, events: readonly SeenEvent[], saturated: boolean): ChainCheck {
  const { dir } = task;
  const region = toChainRegion(dir, task.region);
  const answer = toChainEvents(dir, events);
  const known = toChainEvents(dir, task.known);
  const got = new Set(answer.map((e) => e.id));
  const knownIds = new Set(known.map((e) => e.id));
  const bMin = answer.reduce((m, e) => Math.min(m, e.timeMs), Infinity);
  // A saturated answer is complete only above its own oldest event (if the hypothesis holds).
  const revealed = (t: number) => !saturated || t >= bMin + 2 * PRECISION_MS;
  const lacking = known.filter((e) => surelyIn(e, region) && revealed(e.timeMs) && !got.has(e.id));
  if (lacking.length > 0) return { consistent: false, failed: 'lacking', reason: `lacks ${lacking.length} event(s) seen before, e.g. ${lacking[0]!.id}` };
  const intruders = answer.filter((e) => !knownIds.has(e.id) && e.timeMs >= claim.zone.from - 2 * PRECISION_MS);
  if (intruders.length > 0) return { consistent: false, failed: 'intruder', reason: `holds ${intruders.length} event(s) the previous answer should have had, e.g. ${intruders[0]!.id}` };
  const zone = new Set(claim.zone.ids);
  const checked = known.filter((e) => zone.has(e.id) && got.has(e.id) && revealed(e.timeMs)).length;
  return { consistent: true, checked };
}
