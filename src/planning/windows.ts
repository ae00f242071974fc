/**
 * Earthquake history as gateway-sized time windows. Pure: the clock is always an argument.
 *
 * Consecutive windows share their boundary instant, and every query of a window is widened by up
 * to a second at each end (a gateway may treat either end as exclusive or drop fractional
 * seconds), so a window is two seconds shorter than the longest query the gateway accepts. An
 * event exactly on a boundary can arrive twice (ingestion dedupes by event id) but never zero times.
 */
import { LIMITS } from '../domain/spec.js';
import { uncovered, type Interval } from '../domain/interval.js';
import { DAY_MS, SECOND_MS, isRfc3339, toRfc3339 } from '../domain/time.js';

export interface PlanWindowsArgs {
  fromMs: number;
  toMs: number;
  /** At most `LIMITS.maxWindowDays`, the longest window the gateway accepts. */
  windowDays?: number;
  /** Windows already ingested for the same stream; only the rest of the range is planned. */
  coveredMs?: readonly Interval[];
}

export interface PlanLookbackArgs {
  nowMs: number;
  lookbackMs: number;
  /** Events younger than this are left to another (more frequent) refresh tier. */
  recentMs?: number;
  windowDays?: number;
}

export function planWindows({
  fromMs,
  toMs,
  windowDays = LIMITS.maxWindowDays,
  coveredMs = [],
}: PlanWindowsArgs): Interval[] {
  const windowMs = windowLengthMs(windowDays);
  if (fromMs > toMs) throw new RangeError(`fromMs ${fromMs} is after toMs ${toMs}`);
  return uncovered({ startMs: fromMs, endMs: toMs }, coveredMs).flatMap((gap) => splitGap(gap, windowMs));
}

/**
 * A refresh band, events aged `recentMs` to `lookbackMs`. Coverage is ignored on purpose: the
 * catalog revises recent events, so they are read again.
 */
export function planLookbackWindows({ nowMs, lookbackMs, recentMs = 0, windowDays }: PlanLookbackArgs): Interval[] {
  if (
    !Number.isSafeInteger(lookbackMs) ||
    lookbackMs < 0 ||
    !Number.isSafeInteger(recentMs) ||
    recentMs < 0 ||
    recentMs > lookbackMs
  ) {
    throw new RangeError(
      `lookbackMs and recentMs must be integers with 0 <= recentMs <= lookbackMs, got ${lookbackMs} and ${recentMs}`,
    );
  }
  return planWindows({ fromMs: nowMs - lookbackMs, toMs: nowMs - recentMs, windowDays });
}

/** `2015-01-01T00:00:00Z/2015-02-01T00:00:00Z`: stable across runs, so it can name a job. */
export function windowKey(window: Interval): string {
  return `${toRfc3339(window.startMs)}/${toRfc3339(window.endMs)}`;
}

/** Accepts only what `windowKey` produces, so one window never has two keys. */
export function parseWindowKey(key: string): Interval {
  const parts = key.split('/');
  const [start, end] = parts;
  if (parts.length !== 2 || start === undefined || end === undefined || !isRfc3339(start) || !isRfc3339(end)) {
    throw new RangeError(`not a window key (expected <RFC 3339>/<RFC 3339>): ${JSON.stringify(key)}`);
  }
  const window = { startMs: Date.parse(start), endMs: Date.parse(end) };
  if (windowKey(window) !== key) throw new RangeError(`window key is not in canonical UTC form: ${key}`);
  if (window.endMs <= window.startMs) throw new RangeError(`window key ends before it starts: ${key}`);
  return window;
}

/** The widening margin: a second before the start and a second after the end. */
export const WIDENING_MS = 2 * SECOND_MS;

/** A window of `windowDays` days is queried widened by a second at each end, so it is that much shorter. */
export function windowLengthMs(windowDays: number): number {
  const windowMs = windowDays * DAY_MS - WIDENING_MS;
  if (!(windowDays > 0 && windowDays <= LIMITS.maxWindowDays) || !Number.isSafeInteger(windowMs)) {
    throw new RangeError(
      `windowDays must be above 0 and at most ${LIMITS.maxWindowDays} (a whole number of ms), got ${windowDays}`,
    );
  }
  return windowMs;
}

/** Stepping by addition rather than dividing keeps every bound an exact integer. */
function splitGap(gap: Interval, windowMs: number): Interval[] {
  const windows: Interval[] = [];
  for (let startMs = gap.startMs; startMs < gap.endMs; startMs += windowMs) {
    windows.push({ startMs, endMs: Math.min(startMs + windowMs, gap.endMs) });
  }
  return windows;
}
