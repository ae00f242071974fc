/**
 * What a walk's answers and stored events say of where a region's events are: samples its chunks
 * are sized from. A full answer is a sample of unknown bias (or, under an order guess, every event
 * from its far end on); a proof counts again what its chunk held, and sizes what a sample's points
 * in the rest stand for.
 */
import { type Recount, type Region, type Sample, type SeenEvent, type WalkTask } from './frontier.js';
import { type Fit } from './fit.js';
import { chapman, FIRST_GROWTH, FULL_GROWTH, walkQuery, whereIn } from './place.js';

/**
 * A full answer's points left past the chunk a proof then covered: the full chunk held at least a
 * cap and the proof `proven` of them, so the rest of it holds at least the difference, however
 * the recount reads the points. Without this floor, points placed by a guess (times reported to the
 * day, spread over their unit) that fell in the proven chunk read the crowded rest as thin, and the
 * next chunk took in the whole region again.
 */
export function atLeastTheRest(s: Sample, fit: Fit, proven: number): Sample {
  if (s.trust !== 'estimate' || s.points.length === 0) return s;
  return { ...s, perPoint: Math.max(s.perPoint, (fit.cap - proven) / s.points.length) };
}

/** A count of about a hundred events varies by about a tenth: the rest is sized for that many more. */
const RECOUNT_MARGIN = 1.1;

/**
 * An estimated sample's rest after a chunk it sized was proven: each point stands for as many events
 * as the points inside that chunk did (its exact count over its points, a tenth more), when that is
 * fewer than the guess made before the first count. A window of 201 to 260 events then asks its rest
 * whole; never more, since a sample leaning toward one end (oldest-first, read as a subset) has few
 * points in the chunk and would size the rest as a burst.
 */
export function recounted(rest: Sample, whole: Sample, chunk: Region, proven: number): Sample {
  const inside = whole.points.filter((p) => p > chunk.lo && p < chunk.hi).length;
  if (rest.trust !== 'estimate' || inside === 0) return rest;
  return { ...rest, perPoint: Math.min(rest.perPoint, Math.max(1, (RECOUNT_MARGIN * proven) / inside)) };
}

/**
 * What a full answer showed of the rest of its chunk stays known for the next chunk after a
 * smaller one is proven: a crowded stretch just past the proof must not be asked at the old rate.
 */
export function leftOver(s: Sample | null, rest: Region): Sample | null {
  if (s === null || s.trust === 'stored')
    return s && { ...s, points: s.points.filter((t) => t > rest.lo && t < rest.hi) };
  const keep = s.points.map((t, i) => ({ t, id: s.ids[i] ?? '' })).filter(({ t }) => t > rest.lo && t < rest.hi);
  if (keep.length === 0) return null;
  return { trust: 'estimate', points: keep.map((k) => k.t), ids: keep.map((k) => k.id), perPoint: s.perPoint };
}

export function exactSample(events: readonly SeenEvent[]): Sample {
  return { trust: 'exact', points: events.map((e) => e.timeMs), ids: events.map((e) => e.id), perPoint: 1 };
}

/**
 * A full answer read as a sample of unknown bias: each point stands for the events its chunk
 * probably held, at least a cap and a bit more, more when two answers in a row share few events.
 */
/** `held`: the stored events of a chunk read by them (`STORED_FULL`), else null. */
export function estimateSample(
  t: WalkTask,
  events: readonly SeenEvent[],
  chunk: Region,
  cap: number,
  held: number | null = null,
): Sample {
  const before = t.sample?.trust === 'stored' ? null : t.sample;
  const first = t.reach === null && t.fullAnswers === 0 && t.rate === null && before === null;
  // A chunk that held most of a cap in stored events holds about as many as those, or the cap, and
  // the few new since: more than a cap only by that much.
  let estimate =
    held !== null
      ? RECOUNT_MARGIN * Math.max(cap, events.length, held)
      : (first ? FIRST_GROWTH : FULL_GROWTH) * Math.max(cap, events.length);
  if (before) {
    const inside = before.ids.filter((_, i) => before.points[i]! > chunk.lo && before.points[i]! < chunk.hi);
    const ids = new Set(events.map((e) => e.id));
    const both = inside.filter((id) => ids.has(id)).length;
    if (inside.length > 0) estimate = Math.max(estimate, chapman(inside.length, events.length, both));
  }
  return {
    trust: 'estimate',
    points: whereIn(events, chunk).map(Math.floor),
    ids: events.map((e) => e.id),
    perPoint: estimate / events.length,
  };
}

/** Stored events inside `chunk` (each point stands for `perPoint`). */
export function storedIn(stored: Sample | null, chunk: Region): number {
  return stored === null ? 0 : stored.points.filter((p) => p > chunk.lo && p < chunk.hi).length * stored.perPoint;
}

/**
 * The stored events a proven chunk counted again, and how many more its answer held (fewer when
 * events were deleted since): what `storedFit` learns the catalog's change from. Null when the
 * chunk holds no stored stretch.
 */
export function recountOf(t: WalkTask, events: readonly SeenEvent[]): Recount | null {
  if (t.stored === null) return null;
  const chunk = walkQuery(t);
  const stored = storedIn(t.stored, chunk);
  // Each point stands for `perPoint` stored events, so one chunk's stored count is off by up to that
  // many; but a chunk ends where the next begins, so the errors cancel in the read's sum, which is
  // what the fit learns from. Differences below `perPoint` dropped, a read of a catalog 1% new
  // counted 6 of 100 new events, and its chunks were sized for a catalog that had not changed.
  return { stored, added: events.length - stored };
}

/** The answer holds at least the stored events its chunk held when a read proved them (within a point): it looks complete. */
export function holdsStored(t: WalkTask, events: readonly SeenEvent[]): boolean {
  const recount = recountOf(t, events);
  return recount !== null && recount.stored > 0 && recount.added > -t.stored!.perPoint;
}
