/**
 * Reported units, for placing queries only. A gateway may report times coarser than it filters on
 * (to the minute, the hour, the day): an event reported at r lies somewhere in (r - unit, r + unit).
 * Read as if they were exact, the times of a day-precision answer all sit at midnight, and every
 * chunk placed from them is cut where no event is. Nothing here proves anything: proofs rest on
 * answers below the cap, whatever their times.
 */
import { reportedPrecisionMs, SECOND_MS } from '../../domain/time.js';
import type { Region } from './frontier.js';

/** Fewer times than this may share a coarse unit by chance: they are read to the second. */
const MIN_TIMES = 5;

/** The unit a set of reported times is known to (at least a second): the coarsest dividing them all. */
export function unitOf(timesMs: readonly number[]): number {
  return timesMs.length < MIN_TIMES ? SECOND_MS : reportedPrecisionMs(timesMs);
}

/**
 * Times reported to `unit`, each group sharing a reported time spread evenly over the unit it
 * stands for (inside `region`), as a guess of where they are: truncation is the likeliest way a
 * gateway coarsens a time. Unchanged (the same array) when the unit is a second.
 */
export function spreadTimes(timesMs: readonly number[], region: Region, unit: number): readonly number[] {
  if (unit <= SECOND_MS) return timesMs;
  const groups = new Map<number, number>();
  for (const t of timesMs) groups.set(t, (groups.get(t) ?? 0) + 1);
  const seen = new Map<number, number>();
  return timesMs.map((t) => {
    const lo = Math.max(t, region.lo);
    const hi = Math.min(t + unit, region.hi);
    const j = seen.get(t) ?? 0;
    seen.set(t, j + 1);
    return hi <= lo ? Math.min(Math.max(t, region.lo), region.hi) : lo + ((j + 0.5) * (hi - lo)) / groups.get(t)!;
  });
}
