/**
 * Earthquake history as gateway-sized time windows. Pure: the clock is always an argument.
 *
 * Consecutive windows share their boundary instant. The gateway reads both ends inclusively, so an
 * event exactly on a boundary can arrive twice (ingestion dedupes by event id) but never zero times.
 */
import { LIMITS } from '../gateway/schemas.js';
import { DAY_MS, isRfc3339, toRfc3339 } from '../gateway/time.js';
import { type Interval, subtractIntervals } from './intervals.js';

/** Both ends inclusive, as sent in `start_time` / `end_time`; startMs < endMs. */
export interface TimeWindow {
  startMs: number;
  endMs: number;
}

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
  windowDays?: number;
}

export function planWindows({
  fromMs,
  toMs,
  windowDays = LIMITS.maxWindowDays,
  coveredMs = [],
}: PlanWindowsArgs): TimeWindow[] {
  const windowMs = windowLengthMs(windowDays);
  if (fromMs > toMs) throw new RangeError(`fromMs ${fromMs} is after toMs ${toMs}`);
  return subtractIntervals({ start: fromMs, end: toMs }, coveredMs, 0).flatMap((gap) => splitGap(gap, windowMs));
}

/** Coverage is ignored on purpose: the catalog revises recent events, so they are read again. */
export function planLookbackWindows({ nowMs, lookbackMs, windowDays }: PlanLookbackArgs): TimeWindow[] {
  if (!Number.isSafeInteger(lookbackMs) || lookbackMs < 0) {
    throw new RangeError(`lookbackMs must be a non-negative integer, got ${lookbackMs}`);
  }
  return planWindows({ fromMs: nowMs - lookbackMs, toMs: nowMs, windowDays });
}

/** `2015-01-01T00:00:00Z/2015-02-01T00:00:00Z`: stable across runs, so it can name a job. */
export function windowKey(window: TimeWindow): string {
  return `${toRfc3339(window.startMs)}/${toRfc3339(window.endMs)}`;
}

/** Accepts only what `windowKey` produces, so one window never has two keys. */
export function parseWindowKey(key: string): TimeWindow {
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

function windowLengthMs(windowDays: number): number {
  const windowMs = windowDays * DAY_MS;
  if (!(windowDays > 0 && windowDays <= LIMITS.maxWindowDays) || !Number.isSafeInteger(windowMs)) {
    throw new RangeError(
      `windowDays must be above 0 and at most ${LIMITS.maxWindowDays} (a whole number of ms), got ${windowDays}`,
    );
  }
  return windowMs;
}

/** Stepping by addition rather than dividing keeps every bound an exact integer. */
function splitGap(gap: Interval, windowMs: number): TimeWindow[] {
  const windows: TimeWindow[] = [];
  for (let startMs = gap.start; startMs < gap.end; startMs += windowMs) {
    windows.push({ startMs, endMs: Math.min(startMs + windowMs, gap.end) });
  }
  return windows;
}
