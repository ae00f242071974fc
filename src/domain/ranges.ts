/**
 * Closed integer ranges: the arithmetic behind time intervals (epoch ms, see interval.ts) and year chunks.
 *
 * Every closed [start, end] is measured as the half-open [start, end + adjacency). Milliseconds are
 * treated as a continuum (adjacency 0): event times may carry sub-millisecond digits, and a covered
 * window's end point has no length, so a gap keeps the boundary points around it. Years are whole
 * units (adjacency 1): [1960, 1969] already holds 1969, so the next gap starts at 1970. One measure
 * for both keeps merge, subtract and coverage consistent with each other.
 */

/** Both ends inclusive; start <= end. */
export interface Range {
  start: number;
  end: number;
}

/** 0 for points on a continuum (epoch ms), 1 for whole units (years). */
export type Adjacency = 0 | 1;

export interface Coverage {
  /** The covered parts of the range: clipped to it, merged, sorted. */
  covered: Range[];
  /** The rest of the range, as `subtractRanges` returns it. */
  gaps: Range[];
  /** Covered share of the range's measure; 1 for a range of zero measure, as nothing is missing. */
  coveredFraction: number;
}

export function assertRange(interval: Range, label = 'interval'): void {
  const { start, end } = interval;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) {
    throw new RangeError(`${label} bounds must be safe integers, got [${start}, ${end}]`);
  }
  if (start > end) throw new RangeError(`${label} starts at ${start}, after its end ${end}`);
}

/** Length under the half-open reading; 0 means there is nothing in it to fetch. */
export function measure(interval: Range, adjacency: Adjacency = 0): number {
  return interval.end + adjacency - interval.start;
}

/** Sorted, with overlapping or touching intervals (`b.start <= a.end + adjacency`) joined. */
export function mergeRanges(list: readonly Range[], adjacency: Adjacency = 0): Range[] {
  list.forEach((interval) => assertRange(interval));
  const sorted = [...list].sort((a, b) => a.start - b.start);
  const merged: Range[] = [];
  for (const next of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && next.start <= last.end + adjacency) last.end = Math.max(last.end, next.end);
    else merged.push({ start: next.start, end: next.end });
  }
  return merged;
}

/** The parts of `range` outside `covered`, sorted and disjoint. */
export function subtractRanges(range: Range, covered: readonly Range[], adjacency: Adjacency = 0): Range[] {
  return gapsAround(range, coveredWithin(range, covered, adjacency), adjacency);
}

export function coverageOf(range: Range, covered: readonly Range[], adjacency: Adjacency = 0): Coverage {
  const inside = coveredWithin(range, covered, adjacency);
  const total = measure(range, adjacency);
  const coveredMeasure = inside.reduce((sum, interval) => sum + measure(interval, adjacency), 0);
  return {
    covered: inside,
    gaps: gapsAround(range, inside, adjacency),
    coveredFraction: total === 0 ? 1 : coveredMeasure / total,
  };
}

/** Covered parts clipped to the range; zero-measure leftovers dropped since they cover nothing. */
function coveredWithin(range: Range, covered: readonly Range[], adjacency: Adjacency): Range[] {
  assertRange(range, 'range');
  const clipped = covered.flatMap((interval) => {
    assertRange(interval, 'covered interval');
    const part = { start: Math.max(interval.start, range.start), end: Math.min(interval.end, range.end) };
    return part.start <= part.end && measure(part, adjacency) > 0 ? [part] : [];
  });
  return mergeRanges(clipped, adjacency);
}

/** `inside` must be merged and within `range`; each gap runs from one covered part to the next. */
function gapsAround(range: Range, inside: readonly Range[], adjacency: Adjacency): Range[] {
  const gaps: Range[] = [];
  let cursor = range.start;
  for (const part of inside) {
    gaps.push({ start: cursor, end: part.start - adjacency });
    cursor = part.end + adjacency;
  }
  gaps.push({ start: cursor, end: range.end });
  return gaps.filter((gap) => measure(gap, adjacency) > 0);
}
