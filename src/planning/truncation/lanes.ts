/**
 * Lanes: once a walk's density is known, its region need not be read as one sequence of calls. An
 * idle walk is cut into parts asked at once, each ending where the next began (a second of
 * overlap): the part at the walk's end keeps the walk, the others start walks of their own.
 *
 * Only a walk sized from stored events (a re-read) is cut: where its own chunks would end anyway, so
 * its lanes cost next to no call more than the walk (see LANE_RECOUNT). A walk sized from its rate
 * is not: each lane would end with a chunk that is not full and open with one sized from a rate
 * measured elsewhere, about a call each (2 to 4% of a first read's calls on the bundled months), and
 * billed calls come before wall time. A first read of many windows runs its windows in parallel
 * instead (src/worker/slots.ts).
 */
import { capKnown, sizingCap } from './cap.js';
import { cutAt, type Frontier, type Region, type Task, type WalkTask } from './frontier.js';
import { evenTake, fitOf, type Fit } from './fit.js';
import { startWalk } from './place.js';
import { leftOver } from './sample.js';

/**
 * Lanes are cut once the read counted this many sizing caps of stored events again: lanes are cut
 * where whole chunks end at the fit of that moment, and a fit that then falls costs each lane a call.
 */
const LANE_RECOUNT = 2;

/**
 * ...and only while at most this share of the events counted again is new. Lanes are cut to the fit
 * of that moment; where the catalog changed, the share's estimate still moves as the read counts on
 * (each stretch proven apart from the others adds the error of a stored point at its ends), and
 * each lane's chunks, cut to the old fit, cost a call more: lanes yield to billed calls there. Cut
 * up to 3% new, 4 lanes billed 1.4% more than one walk at 1% new, 0.8% more at 3%; up to 0.3%, the
 * same calls as one walk, for about 3 times the wait of 4 lanes where 1% is new (`npx tsx bench/re-reads.ts`).
 */
const LANE_MAX_NEW_SHARE = 0.003;

/**
 * A walk is cut only where that shortens the read's wait: while it would take at least this many
 * times the calls of any other walk, or with a free lane for each walk near its length. So the
 * lanes already cut are not cut again each time one of them finishes first: each cut rounds its
 * parts' chunks up (about a call a cut), and re-cut whenever a lane finished, a re-read of a catalog
 * 3 to 6% new on 4 lanes took 4 to 6% more calls than one walk; now 1 to 3% fewer than that, for up
 * to 4% more wait (`npx tsx bench/re-reads.ts`).
 */
const STRAGGLER = 2;

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
function storedCut(t: WalkTask, points: number[], fit: Fit): Cut {
  const take = evenTake(points.length, fit, t.stored!.perPoint);
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
 * Into how many parts the walk at `at`, expected to take `calls`, is cut with `free` lanes, or 1 when
 * a cut would not shorten the read's wait: the walks near its length (more than 1/STRAGGLER of it)
 * must each get a lane of their own too, or the read waits for them all the same.
 */
function partsFor(tasks: readonly Task[], at: number, calls: number, free: number, fit: Fit): number {
  // A walk not sized from stored events is expected to take a call.
  const near = tasks.filter(
    (t, i) => i !== at && t.kind === 'walk' && STRAGGLER * (cutOf(t, fit)?.calls ?? 1) > calls,
  ).length;
  if (near > 0 && near + 1 > free) return 1;
  return Math.min(Math.floor(free / (near + 1)) + 1, calls);
}

/** Where a walk sized from stored events would be cut, or null for one sized otherwise. */
function cutOf(t: WalkTask, fit: Fit): Cut | null {
  const points = storedPoints(t);
  return points && storedCut(t, points, fit);
}

/** The part at the walk's end goes on as the walk; the others are new walks the same way. */
function splitWalk(t: WalkTask, regions: Region[], fit: Fit): Task[] {
  const own = t.from === 'newest' ? regions.length - 1 : 0;
  return regions.map((region, i) =>
    startWalk(region, t.from, fit, t.rate, i === own ? leftOver(t.sample, region) : null, leftOver(t.stored, region)),
  );
}

/**
 * Up to `extra` more tasks, cut from the idle walks sized from stored events expected to take the
 * most calls, once the cap is known. Walks in flight (`isBusy`), asking a chunk again after a full
 * answer or waiting on the probe are never cut.
 */
export function splitForLanes(f: Frontier, extra: number, isBusy: (t: Task) => boolean): Frontier {
  const cap = sizingCap(f.cap);
  if (!capKnown(f.cap) || f.recount.stored < LANE_RECOUNT * cap) return f;
  if (f.recount.added > LANE_MAX_NEW_SHARE * f.recount.stored) return f;
  let tasks = f.tasks;
  let left = extra;
  const fit = fitOf(cap, f.recount, f.learnedShare);
  while (left > 0) {
    const candidates = tasks
      .flatMap((t, i) => {
        if (t.kind !== 'walk' || !idle(t) || isBusy(t)) return [];
        const cut = cutOf(t, fit);
        return cut ? [{ t, i, cut }] : [];
      })
      .filter((c) => c.cut.calls >= 2)
      .sort((a, b) => b.cut.calls - a.cut.calls);
    const best = candidates[0];
    const parts = best ? partsFor(tasks, best.i, best.cut.calls, left, fit) : 1;
    if (!best || parts < 2) break;
    const split = splitWalk(best.t, best.cut.regions(parts), fit);
    if (split.length < 2) break;
    tasks = [...tasks.slice(0, best.i), ...split, ...tasks.slice(best.i + 1)];
    left -= split.length - 1;
  }
  return tasks === f.tasks ? f : { ...f, tasks };
}
