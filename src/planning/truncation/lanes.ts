/**
 * Lanes: once a walk's density is known, its region need not be read as one sequence of calls. An
 * idle walk is cut into parts asked at once, each ending where the next began (a second of
 * overlap): the part at the walk's end keeps the walk, the others start walks of their own.
 *
 * A walk sized from stored events (a re-read) is cut where its own chunks would end anyway, so its
 * lanes cost no call more than the walk. A walk sized from its rate is cut at equal lengths, and
 * each lane costs about one call more (its last chunk is not full), so it is split only into lanes
 * of several calls each, and only as far as the caller has capacity to run them (src/worker/slots.ts).
 */
import { capKnown, sizingCap } from './cap.js';
import { clampCut, splitAt, type Frontier, type Region, type Task, type WalkTask } from './frontier.js';
import { FILL, STORED_FILL, leftOver, perMs, startWalk } from './walk.js';

/** Calls a lane is expected to take at least: below that its extra call is not worth it. */
export const LANE_MIN_CALLS = 4;
/** Extra calls a split may cost, as a share of the calls it is expected to save waiting for: billed calls come before wall time. */
export const LANE_COST_SHARE = 0.05;

/**
 * Events a walk's region probably holds, at the lower of the rate it counted last and the window's
 * rate so far (a burst must not cut a quiet stretch into lanes of a call each); null before any count.
 */
export function expectedEvents(t: WalkTask, f: Pick<Frontier, 'eventsProven' | 'provenMs'>): number | null {
  const rate = perMs(t.rate);
  if (rate === null) return null;
  const overall = f.provenMs > 0 ? f.eventsProven / f.provenMs : rate;
  return Math.min(rate, overall) * (t.region.hi - t.region.lo);
}

/** A walk that may be cut now: not in flight, not asking a chunk again after a full answer, not waiting on the probe. */
const idle = (t: WalkTask): boolean => t.held === null && (t.sample === null || t.sample.trust === 'stored');

/** The stored events of a walk's region as its chunks will take them, nearest its end first. */
function storedPoints(t: WalkTask): number[] | null {
  if (t.stored === null || t.sample?.trust !== 'stored') return null;
  const inside = t.stored.points.filter((p) => p > t.region.lo && p < t.region.hi);
  return inside.sort((a, b) => (t.from === 'newest' ? b - a : a - b));
}

interface Cut {
  calls: number;
  regions(parts: number): Region[];
}

/** Stored events say where each chunk ends: lanes are cut there, whole chunks each. */
function storedCut(t: WalkTask, points: number[], cap: number): Cut {
  const take = Math.max(1, Math.floor((STORED_FILL * cap) / t.stored!.perPoint));
  const chunks = Math.ceil(points.length / take);
  return {
    calls: chunks,
    regions(parts) {
      const per = Math.ceil(chunks / parts);
      const cuts: number[] = [];
      for (let k = per; k < chunks; k += per) cuts.push((points[k * take - 1]! + points[k * take]!) / 2);
      return cutAt(
        t.region,
        cuts.sort((a, b) => a - b),
      );
    },
  };
}

/**
 * A rate is trusted for cutting lanes once it rests on about two chunks' worth of events (one chunk
 * may be a burst, and lanes cut at a burst's rate cost a call each for nothing).
 */
function rateCut(t: WalkTask, f: Frontier, perCall: number): Cut | null {
  if (t.rate === null || t.rate.events < 2 * perCall) return null;
  const calls = (expectedEvents(t, f) ?? 0) / perCall;
  return { calls, regions: (parts) => cutRegion(t.region, parts) };
}

/** `r` cut at whole seconds near `cuts` (ascending), neighbours overlapping by a second, lowest first. */
function cutAt(r: Region, cuts: readonly number[]): Region[] {
  const out: Region[] = [];
  let rest = r;
  for (const c of cuts) {
    const at = clampCut(rest, c);
    if (at === null || at <= rest.lo + 1000) continue;
    const [head, tail] = splitAt(rest, at);
    out.push(head);
    rest = tail;
  }
  out.push(rest);
  return out;
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

/** The part at the walk's end goes on as the walk; the others are new walks the same way. */
function splitWalk(t: WalkTask, regions: Region[], cap: number, overall: number | null): Task[] {
  const own = t.from === 'newest' ? regions.length - 1 : 0;
  // New lanes start from the window's rate so far when it is lower: they may lie far from the last burst.
  const calm =
    t.rate && overall !== null && overall < perMs(t.rate)! ? { events: overall * t.rate.ms, ms: t.rate.ms } : t.rate;
  return regions.map((region, i) =>
    startWalk(
      region,
      t.from,
      cap,
      i === own ? t.rate : calm,
      i === own ? leftOver(t.sample, region) : null,
      leftOver(t.stored, region),
    ),
  );
}

/**
 * Up to `extra` more tasks, cut from the idle walks expected to take the most calls, once the cap
 * is known. Walks in flight (`isBusy`), asking a chunk again after a full answer or waiting on the
 * probe are never cut.
 */
export function splitForLanes(f: Frontier, extra: number, isBusy: (t: Task) => boolean): Frontier {
  if (!capKnown(f.cap)) return f;
  let tasks = f.tasks;
  let left = extra;
  const cap = sizingCap(f.cap);
  const perCall = FILL * cap;
  while (left > 0) {
    const candidates = tasks
      .flatMap((t, i) => {
        if (t.kind !== 'walk' || !idle(t) || isBusy(t)) return [];
        const points = storedPoints(t);
        const cut = points ? storedCut(t, points, cap) : rateCut(t, f, perCall);
        return cut ? [{ t, i, cut, stored: points !== null }] : [];
      })
      .filter((c) => c.cut.calls >= (c.stored ? 2 : 2 * LANE_MIN_CALLS))
      .sort((a, b) => b.cut.calls - a.cut.calls);
    const best = candidates[0];
    if (!best) break;
    // Lanes cut at chunk ends cost nothing; others at most a share of the calls they save waiting for.
    const parts = best.stored
      ? Math.min(left + 1, Math.floor(best.cut.calls))
      : Math.min(
          left + 1,
          Math.floor(best.cut.calls / LANE_MIN_CALLS),
          1 + Math.floor(best.cut.calls * LANE_COST_SHARE),
        );
    const overall = f.provenMs > 0 ? f.eventsProven / f.provenMs : null;
    const split = splitWalk(best.t, best.cut.regions(parts), cap, overall);
    if (split.length < 2) break;
    tasks = [...tasks.slice(0, best.i), ...split, ...tasks.slice(best.i + 1)];
    left -= split.length - 1;
  }
  return tasks === f.tasks ? f : { ...f, tasks };
}
