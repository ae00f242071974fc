/**
 * Walks: no hypothesis about which events a truncated answer keeps. The region is covered from
 * its start by chunks sized to hold well under a cap of events, so that each answer is complete
 * on its own; chunk sizes come from the events seen so far (a random answer is a random sample),
 * refined by every chunk's exact count.
 */
import { clampCut, knownIn, mergeEvents, splitAt, type Density, type Region, type SeenEvent, type Task } from './frontier.js';

type Walk = Extract<Task, { kind: 'walk' }>;

/** Events a chunk aims for, as a share of the cap: sample spacing is noisy. */
const CHUNK_FILL = 0.7;
/** A rest expected below this share of a chunk's target is merged into the chunk, if the whole stays below MERGED_FILL of a cap. */
const SLIVER = 0.4;
const MERGED_FILL = 0.85;
/** How many sample points a prior estimate is worth before exact counts take over. */
const PRIOR_POINTS = 3;
/**
 * Older counts fade: sample points come from answers of different kinds (a random subset stands
 * for many events each, a complete answer for itself), so the local ratio matters most.
 */
const FADE = 0.5;

/** Chapman's estimate of a population from two samples that share `both` members. */
export function chapman(first: number, second: number, both: number): number {
  return ((first + 1) * (second + 1)) / (both + 1) - 1;
}

/** A walk over `region`, from a first estimate of how many events it holds (and the rate last counted, if any). */
export function startWalk(region: Region, known: readonly SeenEvent[], estimatedEvents: number, cap: number, perMs: number | null = null): Walk {
  const inside = knownIn(known, region);
  const perPoint = Math.max(1, estimatedEvents) / Math.max(1, inside.length);
  return withCut({ kind: 'walk', region, known: inside, density: { events: perPoint * PRIOR_POINTS, points: PRIOR_POINTS, perMs }, cut: null }, cap);
}

/**
 * Places the next cut so that the chunk below it holds about CHUNK_FILL of a cap, by the sample
 * points and by the rate of the chunks just counted, whichever gives the shorter chunk: points
 * from a largest-magnitude or mixed answer are not a uniform sample, and catalogs come in bursts.
 */
export function withCut(task: Walk, cap: number): Walk {
  const target = cap * CHUNK_FILL;
  const perPoint = task.density.events / task.density.points;
  const take = Math.max(1, Math.floor(target / perPoint));
  // Every known event may lie in the region (a time reported in whole seconds may equal its start).
  const points = task.known.map((e) => e.timeMs).sort((a, b) => a - b);
  const byPoints = take < points.length ? (points[take - 1]! + points[take]!) / 2 : Infinity;
  const byRate = task.density.perMs ? task.region.lo + target / task.density.perMs : Infinity;
  const estimate = (from: number) =>
    Math.max(points.filter((t) => t >= from).length * perPoint, (task.density.perMs ?? 0) * (task.region.hi - from));
  let at = Math.min(byPoints, byRate);
  if (at >= task.region.hi - 1000) {
    // The sample sits at the far end: if the whole is too much for one answer, cut just below it,
    // so the quiet part is proven on its own and the crowded part is left alone.
    const first = points[0];
    if (first === undefined || estimate(task.region.lo) < MERGED_FILL * cap || first - 1000 < task.region.lo + 2000) return { ...task, cut: null };
    at = first - 1000;
  }
  // Leave no sliver for a call of its own: a small enough rest joins this chunk.
  if (estimate(at) < SLIVER * target && estimate(task.region.lo) < MERGED_FILL * cap) return { ...task, cut: null };
  return { ...task, cut: clampCut(task.region, at) };
}

export function walkQuery(task: Walk): Region {
  return task.cut === null ? task.region : { lo: task.region.lo, hi: task.cut };
}

/**
 * After an answer to the walk's chunk. A complete chunk is covered and teaches the density; a
 * saturated one is walked again on its own, sized from a capture-recapture estimate.
 */
export interface AfterWalk {
  /** The rest of the walk past the chunk. */
  rest: Task[];
  /** The chunk, when its answer was saturated, and how to walk it again. */
  saturated: { chunk: Region; again: Walk | null } | null;
}

export function afterWalk(task: Walk, events: readonly SeenEvent[], saturated: boolean, cap: number): AfterWalk {
  const chunk = walkQuery(task);
  const pointsBefore = knownIn(task.known, chunk);
  const before = new Set(pointsBefore.map((e) => e.id));
  const both = events.filter((e) => before.has(e.id)).length;
  const chunkMs = Math.max(1000, chunk.hi - chunk.lo);
  // A saturated chunk held at least a cap. Two samples say how many, if they were drawn independently
  // (largest-magnitude answers are nested, which Chapman reads as "few"); the rate of the chunks
  // counted before says so too; the larger guess is the safer one.
  const estimate = saturated
    ? Math.max(cap * 1.3, pointsBefore.length > 0 ? chapman(pointsBefore.length, events.length, both) : cap * 2, (task.density.perMs ?? 0) * chunkMs)
    : events.length;
  const rest: Task[] = [];
  if (task.cut !== null) {
    const [, restRegion] = splitAt(task.region, task.cut);
    const rate = estimate / chunkMs;
    // Quick to believe a quieter stretch (catalogs come in bursts), slower to believe a busier one.
    const last = task.density.perMs;
    const perMs = saturated ? Math.max(rate, last ?? 0) : last === null || rate < last ? Math.max(rate, 1 / chunkMs) : FADE * last + (1 - FADE) * rate;
    // Sample points of one stretch may each stand for many events (a random answer) or for one (a
    // complete run, from a newest-first answer): a chunk whose points were nearly all its events
    // starts the ratio afresh from what it saw.
    const complete = !saturated && estimate > 0 && pointsBefore.length >= 0.8 * estimate;
    const fade = complete ? 0 : FADE;
    const density: Density = { events: fade * task.density.events + estimate, points: fade * task.density.points + Math.max(0.5, pointsBefore.length), perMs };
    rest.push(withCut({ kind: 'walk', region: restRegion, known: knownIn(mergeEvents(task.known, events), restRegion), density, cut: null }, cap));
  }
  if (!saturated) return { rest, saturated: null };
  const again = startWalk(chunk, mergeEvents(pointsBefore, events), estimate, cap, Math.max(estimate / chunkMs, task.density.perMs ?? 0));
  const half = clampCut(chunk, (chunk.lo + chunk.hi) / 2);
  if (again.cut === null && half === null) return { rest, saturated: { chunk, again: null } };
  // Sample points all in one place: cut the chunk in half rather than asking it whole again.
  return { rest, saturated: { chunk, again: again.cut === null ? { ...again, cut: half } : again } };
}

