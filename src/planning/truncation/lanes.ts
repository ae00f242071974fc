/**
 * Lanes: a window's calls need not form one sequential chain once its density is known. A long
 * chain step is cut at estimated points into parts asked at once, each ending where the next
 * began (a second of overlap): the part that continues the chain keeps its claim, the others
 * start as scans and become chains (or walks) of their own. Walks are not cut: each chunk's size
 * comes from the counts just before it, and a walk cut in parts would have to learn them anew. Each lane costs about one call more
 * (its last answer is not full), so a window is split only into lanes of several calls each, and
 * only as far as the caller has capacity to run them (src/worker/slots.ts).
 */
import { SECOND_MS } from '../../domain/time.js';
import { clampCut, knownIn, splitAt, type Frontier, type Region, type Task } from './frontier.js';

/** Calls a lane is expected to take at least: below that its extra call is not worth it. */
export const LANE_MIN_CALLS = 4;
/** Extra calls a split may cost, as a share of the calls it is expected to save waiting for. */
export const LANE_COST_SHARE = 0.1;
/** Answers of a chain needed before its density is trusted for cutting (one answer may be a burst). */
const MIN_CLAIMS = 2;

type ChainTask = Extract<Task, { kind: 'chain' }>;

/**
 * Events a chain step's region probably holds, at the density of the chain's answers so far; null
 * before the chain has MIN_CLAIMS answers.
 */
export function expectedEvents(f: Frontier, t: ChainTask): number | null {
  const claim = f.claims.find((c) => c.id === t.claim);
  const chain = claim ? f.claims.filter((c) => c.chain === claim.chain) : [];
  if (chain.length < MIN_CLAIMS) return null;
  const span = Math.max(...chain.map((c) => c.region.hi)) - Math.min(...chain.map((c) => c.region.lo));
  const events = chain.reduce((n, c) => n + c.size, 0);
  return (events / Math.max(SECOND_MS, span)) * (t.region.hi - t.region.lo);
}

/** `parts` regions of about equal length covering `r`, neighbours overlapping by a second. */
function cutRegion(r: Region, parts: number): Region[] {
  const out: Region[] = [];
  let rest = r;
  for (let i = parts; i > 1; i--) {
    const at = clampCut(rest, rest.lo + (rest.hi - rest.lo) / i);
    if (at === null) break;
    const [head, tail] = splitAt(rest, at);
    out.push(head);
    rest = tail;
  }
  out.push(rest);
  return out;
}

/** The chain goes on at its own end (top for newest-first, bottom for oldest-first); the other parts are new scans. */
function splitChain(t: ChainTask, parts: number): Task[] {
  const regions = cutRegion(t.region, parts);
  const ownIndex = t.dir === 'newest' ? regions.length - 1 : 0;
  return regions.map((region, i) =>
    i === ownIndex ? { ...t, region, known: knownIn(t.known, region) } : { kind: 'scan' as const, region, known: knownIn(t.known, region), circle: null },
  );
}

/**
 * Up to `extra` more tasks, cut from the idle chain steps expected to take the most
 * calls. Tasks in flight (`busy` keys, see `taskKey`) are never cut: their answers are due.
 */
export function splitForLanes(f: Frontier, extra: number, isBusy: (t: Task) => boolean): Frontier {
  let tasks = f.tasks;
  let left = extra;
  while (left > 0) {
    const candidates = tasks
      .flatMap((t, i) => (t.kind === 'chain' && !isBusy(t) ? [{ t, i, calls: (expectedEvents(f, t) ?? 0) / f.capFloor }] : []))
      .filter((c) => c.calls >= 2 * LANE_MIN_CALLS)
      .sort((a, b) => b.calls - a.calls);
    const best = candidates[0];
    if (!best) break;
    const parts = Math.min(left + 1, Math.floor(best.calls / LANE_MIN_CALLS), 1 + Math.floor(best.calls * LANE_COST_SHARE));
    const split = splitChain(best.t, parts);
    if (split.length < 2) break;
    tasks = [...tasks.slice(0, best.i), ...split, ...tasks.slice(best.i + 1)];
    left -= split.length - 1;
  }
  return tasks === f.tasks ? f : { ...f, tasks };
}
