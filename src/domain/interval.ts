/**
 * One span of time, as the product means it everywhere: a window, a query, a gap, a covered part.
 * Epoch milliseconds, both ends inclusive (an event exactly on an end belongs to the interval).
 */
import * as z from 'zod';
import { coverageOf, subtractRanges, type Range } from './ranges.js';

export const intervalSchema = z.strictObject({ startMs: z.number(), endMs: z.number() });
export type Interval = z.infer<typeof intervalSchema>;

export function contains(interval: Interval, ms: number): boolean {
  return ms >= interval.startMs && ms <= interval.endMs;
}

export function toRange(i: Interval): Range {
  return { start: i.startMs, end: i.endMs };
}

export function fromRange(r: Range): Interval {
  return { startMs: r.start, endMs: r.end };
}

/** The parts of `range` that `covered` leaves out (instants are a continuum: adjacency 0). */
export function uncovered(range: Interval, covered: readonly Interval[]): Interval[] {
  return subtractRanges(toRange(range), covered.map(toRange), 0).map(fromRange);
}

export interface TimeCoverage {
  covered: Interval[];
  gaps: Interval[];
  coveredFraction: number;
}

export function timeCoverage(range: Interval, covered: readonly Interval[]): TimeCoverage {
  const c = coverageOf(toRange(range), covered.map(toRange), 0);
  return { covered: c.covered.map(fromRange), gaps: c.gaps.map(fromRange), coveredFraction: c.coveredFraction };
}
