/**
 * Lanes: once a walk's rate is known, its region need not be read as one sequence of calls. An idle
 * walk is cut at equal lengths into parts asked at once, each ending where the next began (a second
 * of overlap): the part at the anchor keeps the walk, the others start walks of their own at the
 * same rate. Each lane costs about one call more (its last chunk is not full), so a walk is split
 * only into lanes of several calls each, and only as far as the caller has capacity to run them
 * (src/worker/slots.ts).
 */
import { clampCut, splitAt, type Frontier, type Region, type Task, type WalkTask } from './frontier.js';
import { FILL, leftOver, perMs, startWalk } from './walk.js';

/** Calls a lane is expected to take at least: below that its extra call is not worth it. */
export const LANE_MIN_CALLS = 4;
/** Extra calls a split may cost, as a share of the calls it is expected to save waiting for. */
export const LANE_COST_SHARE = 0.1;

/**
 * Events a walk's region probably holds, at the lower of the rate it counted last and the window's
 * rate so far (a burst must not cut a quiet stretch into lanes of a call each); null before any count.
 */
export function expectedEvents(t: WalkTask, f: Pick<Frontier, 'eventsSeen' | 'provenMs'>): number | null {
  const rate = perMs(t.rate);
  if (rate === null) return null;
  const overall = f.provenMs > 0 ? f.eventsSeen / f.provenMs : rate;
  return Math.min(rate, overall) * (t.region.hi - t.region.lo);
}

/**
 * A rate is trusted for cutting lanes once it rests on about two chunks' worth of events (one chunk
 * may be a burst, and lanes cut at a burst's rate cost a call each for nothing), and the walk is not
 * asking a chunk again after a full answer.
 */
function trusted(t: WalkTask, perCall: number): boolean {
  return (t.sample === null || t.sample.trust === 'stored') && t.rate !== null && t.rate.events >= 2 * perCall;
}

/** `parts` regions of about equal length covering `r`, neighbours overlapping by a second, lowest first. */
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

/** The part at the walk's anchor goes on as the walk; the others are new walks the same way. */
function splitWalk(t: WalkTask, parts: number, cap: number, overall: number | null): Task[] {
  const regions = cutRegion(t.region, parts);
  const own = t.dir === 'down' ? regions.length - 1 : 0;
  // New lanes start from the window's rate so far when it is lower: they may lie far from the last burst.
  const calm =
    t.rate && overall !== null && overall < perMs(t.rate)! ? { events: overall * t.rate.ms, ms: t.rate.ms } : t.rate;
  return regions.map((region, i) =>
    startWalk(
      region,
      t.dir,
      cap,
      i === own ? t.rate : calm,
      i === own || t.sample?.trust === 'stored' ? leftOver(t.sample, region) : null,
    ),
  );
}

/**
 * Up to `extra` more tasks, cut from the idle walks expected to take the most calls. Walks in
 * flight (`isBusy`) or asking a chunk again after a full answer are never cut.
 */
export function splitForLanes(f: Frontier, extra: number, isBusy: (t: Task) => boolean): Frontier {
  let tasks = f.tasks;
  let left = extra;
  const perCall = FILL * f.capFloor;
  while (left > 0) {
    const candidates = tasks
      .flatMap((t, i) =>
        t.kind === 'walk' && trusted(t, perCall) && !isBusy(t)
          ? [{ t, i, calls: (expectedEvents(t, f) ?? 0) / perCall }]
          : [],
      )
      .filter((c) => c.calls >= 2 * LANE_MIN_CALLS)
      .sort((a, b) => b.calls - a.calls);
    const best = candidates[0];
    if (!best) break;
    const parts = Math.min(
      left + 1,
      Math.floor(best.calls / LANE_MIN_CALLS),
      1 + Math.floor(best.calls * LANE_COST_SHARE),
    );
    const split = splitWalk(best.t, parts, f.capFloor, f.provenMs > 0 ? f.eventsSeen / f.provenMs : null);
    if (split.length < 2) break;
    tasks = [...tasks.slice(0, best.i), ...split, ...tasks.slice(best.i + 1)];
    left -= split.length - 1;
  }
  return tasks === f.tasks ? f : { ...f, tasks };
}
