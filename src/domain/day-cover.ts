/**
 * How the events of an interval (both ends included) are counted from UTC day totals: the whole
 * days [daysFromMs, daysToMs) summed, plus or minus the events of the edges where the interval and
 * those days differ. Each edge is taken from the shorter side of its boundary (the part of the
 * day inside the interval, or the part outside it to subtract), so no edge is longer than half a
 * day: a window ending two seconds before midnight costs two seconds of events, not a day's.
 */
import type { Interval } from './interval.js';
import { DAY_MS } from './time.js';

export interface DayCover {
  /** UTC midnights, epoch ms; no day when equal. */
  daysFromMs: number;
  daysToMs: number;
  /** Events in [from, to) added: the interval's start before the first whole day. */
  addStart: { fromMs: number; toMs: number } | null;
  /** Events in [from, to) subtracted: the first day's part before the interval's start. */
  subtractStart: { fromMs: number; toMs: number } | null;
  /** Events in [from, to] added (both ends included): the interval's end after the last whole day. */
  addEnd: { fromMs: number; toMs: number } | null;
  /** Events in (from, to) subtracted (neither end): the last day's part after the interval's end. */
  subtractEnd: { fromMs: number; toMs: number } | null;
}

/** The interval read from the events alone, no day total: for a stream without maintained days. */
export function eventsCover(w: Interval): DayCover {
  const none = { daysFromMs: w.startMs, daysToMs: w.startMs, addStart: null, subtractStart: null, subtractEnd: null };
  return { ...none, addEnd: { fromMs: w.startMs, toMs: w.endMs } };
}

const floorDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

export function dayCover(w: Interval): DayCover {
  const lo = w.startMs;
  const hi = w.endMs;
  const below = floorDay(lo);
  const above = below === lo ? lo : below + DAY_MS;
  const startInside = above - lo <= lo - below;
  const daysFromMs = startInside ? above : below;
  const lastMidnight = floorDay(hi);
  const nextMidnight = lastMidnight + DAY_MS;
  const endInside = hi - lastMidnight <= nextMidnight - hi;
  const daysToMs = endInside ? lastMidnight : nextMidnight;
  // Inside one day, off both midnights: the events themselves.
  if (daysFromMs > daysToMs) return eventsCover(w);
  return {
    daysFromMs,
    daysToMs,
    addStart: startInside && above > lo ? { fromMs: lo, toMs: above } : null,
    subtractStart: startInside ? null : { fromMs: below, toMs: lo },
    addEnd: endInside ? { fromMs: lastMidnight, toMs: hi } : null,
    subtractEnd: endInside ? null : { fromMs: hi, toMs: nextMidnight },
  };
}
