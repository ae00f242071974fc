/**
 * How many events a planned window holds, judged from what is already stored. Pure: the counts
 * come from the caller (db/queries/plan.ts counts them).
 *
 * Events of a stream are all stored for the time its done windows cover. A stream that asks for
 * every event another one asks for (no or a lower minimum magnitude, no or a containing circle) is
 * *wider*: where it is covered, counting the stored events that match the narrower stream's
 * filters gives that stream's exact count. Elsewhere the count is extrapolated from the event rate
 * of the covered time, with the lowest and highest rate seen as its range.
 */
import { haversineKm } from '../domain/geo.js';
import type { EarthquakeFilters } from '../domain/filters.js';
import { timeCoverage, type Interval } from '../domain/interval.js';
import { mergeRanges } from '../domain/ranges.js';

const HOUR_MS = 3_600_000;
/** Rounding slack for circles computed in floating point. */
const CIRCLE_SLACK_KM = 1e-6;

/** True when every event `narrow` asks for is also one that `wide` asks for. */
export function isWiderOrEqual(wide: EarthquakeFilters, narrow: EarthquakeFilters): boolean {
  const magnitudeOk =
    wide.minMagnitude === null || (narrow.minMagnitude !== null && narrow.minMagnitude >= wide.minMagnitude);
  if (!magnitudeOk) return false;
  if (wide.circle === null) return true;
  if (narrow.circle === null) return false;
  const apartKm = haversineKm(
    wide.circle.latitude,
    wide.circle.longitude,
    narrow.circle.latitude,
    narrow.circle.longitude,
  );
  return apartKm + narrow.circle.radiusKm <= wide.circle.radiusKm + CIRCLE_SLACK_KM;
}

/** Sorted, merged union of intervals. */
export function unionOf(intervals: readonly Interval[]): Interval[] {
  return mergeRanges(intervals.map((i) => ({ start: i.startMs, end: i.endMs }))).map((r) => ({
    startMs: r.start,
    endMs: r.end,
  }));
}

/** The parts of `window` inside `covered` (a union, see unionOf). */
export function coveredPartsOf(window: Interval, covered: readonly Interval[]): Interval[] {
  return timeCoverage(window, covered).covered;
}

/** Splits intervals into pieces of at most `maxMs`, so that each piece gives one rate. */
export function piecesOf(intervals: readonly Interval[], maxMs: number): Interval[] {
  return intervals.flatMap((i) => {
    const out: Interval[] = [];
    for (let start = i.startMs; start < i.endMs; start += maxMs)
      out.push({ startMs: start, endMs: Math.min(start + maxMs, i.endMs) });
    return out;
  });
}

export interface Counted {
  ms: number;
  events: number;
  /** Only a lower bound: a sample answer that came back full. */
  atLeast?: boolean;
}

/** Events per ms: what the covered time says about time not covered. */
export interface RatePool {
  low: number;
  expected: number;
  high: number;
  /** Only lower bounds were seen (every sample came back full). */
  lowerBoundOnly: boolean;
}

/**
 * Pieces shorter than this give rates too noisy to extrapolate from (a boundary sliver is seconds
 * long); samples of a dense stream shrink to a few hours, so they still count.
 */
export const MIN_RATE_PIECE_MS = HOUR_MS;
/** When every sample came back full, the true rate is at least the largest; assume up to this many times it. */
const LOWER_BOUND_SPREAD = 4;

export function ratePool(pieces: readonly Counted[], minPieceMs = MIN_RATE_PIECE_MS): RatePool | null {
  const usable = pieces.filter((p) => p.ms >= minPieceMs && p.ms > 0);
  const exact = usable.filter((p) => !p.atLeast);
  const bounds = usable.filter((p) => p.atLeast).map((p) => p.events / p.ms);
  if (exact.length > 0) {
    const rates = exact.map((p) => p.events / p.ms);
    const expected = exact.reduce((n, p) => n + p.events, 0) / exact.reduce((n, p) => n + p.ms, 0);
    return {
      low: Math.min(...rates),
      expected: Math.max(expected, ...bounds),
      high: Math.max(...rates, ...bounds),
      lowerBoundOnly: false,
    };
  }
  if (bounds.length === 0) return null;
  const floor = Math.max(...bounds);
  return { low: floor, expected: floor, high: floor * LOWER_BOUND_SPREAD, lowerBoundOnly: true };
}

export interface EventRange {
  low: number;
  expected: number;
  high: number;
}

/**
 * `exact`: counted whole (stored, or a sample below the cap over all of it). `scaled`: part of it
 * counted, the rest at its own rate. `bounded`: only a full sample inside it, a lower bound.
 * `extrapolated`: nothing inside it, the rate of other windows. `unknown`: nothing anywhere.
 */
export type DensityKind = 'exact' | 'scaled' | 'bounded' | 'extrapolated' | 'unknown';

/** A window whose own count says how dense it is: the estimate of it is worth its name. */
export const isMeasured = (kind: DensityKind): boolean => kind === 'exact' || kind === 'scaled';

/**
 * The densest the catalog plausibly gets, events per day with no filter (the first days after a
 * great earthquake): the high end of what time nothing counted may hold. A full answer is only a
 * lower bound, and an empty sample says nothing of the time around it.
 */
export const MAX_EVENTS_PER_DAY = 1_500;
const MAX_EVENTS_PER_MS = MAX_EVENTS_PER_DAY / (24 * HOUR_MS);

export interface WindowEvents {
  kind: DensityKind;
  /** null when nothing is known. */
  events: EventRange | null;
}

/**
 * A window's events. What was counted is certain, and so are the events of full samples apart from
 * it (`bound`); the time neither covers holds, at the low end, nothing (a gap in the catalog);
 * expected, the rate of both together when they span an hour or more (a full sample left out would
 * price the densest stretches at the rate of the sparse ones, where samples came back below the
 * cap), else the pool's; at the high end, the densest the catalog plausibly gets.
 */
export function windowEvents(
  window: Interval,
  covered: Counted,
  pool: RatePool | null,
  bound: Counted | null = null,
): WindowEvents {
  const lengthMs = window.endMs - window.startMs;
  const restMs = Math.max(0, lengthMs - covered.ms);
  if (restMs === 0)
    return { kind: 'exact', events: { low: covered.events, expected: covered.events, high: covered.events } };
  const seen = { ms: covered.ms + (bound?.ms ?? 0), events: covered.events + (bound?.events ?? 0) };
  // A full sample is a lower bound however short; a count of minutes says little of a month.
  const own = seen.ms >= MIN_RATE_PIECE_MS || (bound !== null && seen.ms > 0) ? seen.events / seen.ms : null;
  const rate = own ?? pool?.expected ?? null;
  if (rate === null) return { kind: 'unknown', events: null };
  const kind: DensityKind = covered.ms >= MIN_RATE_PIECE_MS ? 'scaled' : bound !== null ? 'bounded' : 'extrapolated';
  const unseenMs = Math.max(0, lengthMs - seen.ms);
  const high = Math.max(covered.events + restMs * MAX_EVENTS_PER_MS, seen.events + unseenMs * rate);
  // Full samples alone say "at least": a window a cap fills is priced between that and the densest
  // (their geometric mean), unless the samples' rate says more.
  const unmeasured = kind === 'bounded' ? Math.sqrt(Math.max(1, seen.events) * high) : 0;
  const expected = Math.max(seen.events + unseenMs * rate, unmeasured);
  return { kind, events: { low: seen.events, expected, high } };
}

export interface SampleCount {
  interval: Interval;
  events: number;
  /** The answer came back full: at least `events`. */
  full: boolean;
}

const overlaps = (a: Interval, b: Interval) => a.startMs <= b.endMs && b.startMs <= a.endMs;

/**
 * What is counted in one window: its stored parts, plus complete samples lying inside it and
 * outside those parts (sampled events are not stored, so they never count twice), each once.
 */
export function countedInWindow(
  window: Interval,
  storedParts: readonly Interval[],
  storedEvents: number,
  samples: readonly SampleCount[],
): Counted {
  let ms = storedParts.reduce((n, p) => n + (p.endMs - p.startMs), 0);
  let events = storedEvents;
  const taken: Interval[] = [...storedParts];
  for (const s of samples) {
    const inside = s.interval.startMs >= window.startMs && s.interval.endMs <= window.endMs;
    if (s.full || !inside || taken.some((t) => overlaps(t, s.interval))) continue;
    taken.push(s.interval);
    ms += s.interval.endMs - s.interval.startMs;
    events += s.events;
  }
  return { ms, events };
}

/** Samples as rate pieces: a full answer only bounds its interval's count from below. */
export function samplePieces(samples: readonly SampleCount[]): Counted[] {
  return samples.map((s) => ({ ms: s.interval.endMs - s.interval.startMs, events: s.events, atLeast: s.full }));
}

/**
 * Full samples inside the window apart from what was counted there (`counted`: stored parts and
 * samples below the cap) and from each other, smallest first: at least their events, over their time.
 */
export function boundInWindow(
  window: Interval,
  samples: readonly SampleCount[],
  counted: readonly Interval[] = [],
): Counted | null {
  const inside = (i: Interval) => i.startMs >= window.startMs && i.endMs <= window.endMs;
  const lengthOf = (i: Interval) => i.endMs - i.startMs;
  const complete = samples.filter((s) => !s.full && inside(s.interval)).map((s) => s.interval);
  const taken: Interval[] = [...counted, ...complete];
  // A full sample longer than the complete ones is a weak bound (a cap over a week the catalog fills
  // ten times): beside them it would price the window low. Alone, it is all there is.
  const longest = complete.length > 0 ? Math.max(...complete.map(lengthOf)) : Infinity;
  const full = samples
    .filter((s) => s.full && inside(s.interval) && lengthOf(s.interval) <= longest)
    .sort((a, b) => a.interval.endMs - a.interval.startMs - (b.interval.endMs - b.interval.startMs));
  let ms = 0;
  let events = 0;
  for (const s of full) {
    if (taken.some((t) => overlaps(t, s.interval))) continue;
    taken.push(s.interval);
    ms += s.interval.endMs - s.interval.startMs;
    events += s.events;
  }
  return ms > 0 ? { ms, events, atLeast: true } : null;
}
