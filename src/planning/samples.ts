/**
 * Where `--sample N` asks, one answer after another. Pure: the caller makes the calls and reports
 * each answer's size and the time its events spanned.
 *
 * Each window's samples start with all of it (an answer below the cap counts it whole, and the
 * window needs no more), or with a stretch of half a cap when the answers so far show it dense, and
 * shrink after a full answer, grow after a sparse one. How dense one window was only places the
 * next window's first sample: it counts nothing there.
 */
import type { Interval } from '../domain/interval.js';
import type { SampleCount } from './density.js';
import { LIMITS } from '../domain/spec.js';
import { DAY_MS, SECOND_MS, floorSecond, secondAfter } from '../domain/time.js';

const CAP = LIMITS.maxResultsCeiling;
/** The shortest interval a sample shrinks to: a minute holds a cap of events only in a swarm. */
const MIN_SAMPLE_MS = 60 * SECOND_MS;
/** An answer this small measures little: the next sample looks at a longer interval. */
const SPARSE_ANSWER = CAP / 4;
/** Spreads repeated samples of one window over different parts of it. */
const GOLDEN = 0.618_033_988_75;

/** Which windows the N samples fall in, spread evenly over the list (repeating when N exceeds it). */
export function sampleWindows(windows: readonly Interval[], n: number): Interval[] {
  if (windows.length === 0 || n <= 0) return [];
  return Array.from(
    { length: n },
    (_, k) => windows[Math.min(windows.length - 1, Math.floor(((k + 0.5) * windows.length) / n))]!,
  );
}

/**
 * The next interval length after an answer. A full answer says only "at least a cap": look at a
 * quarter of it, or half the span its events covered if that is shorter (a newest- or oldest-first
 * gateway returns a cap of events packed at one end). A sparse answer doubles it.
 */
export function nextLengthMs(lengthMs: number, returned: number, spanMs: number, windowMs: number): number {
  if (returned >= CAP) return Math.max(MIN_SAMPLE_MS, Math.min(lengthMs / 4, spanMs / 2));
  if (returned < SPARSE_ANSWER) return Math.min(windowMs, lengthMs * 2);
  return lengthMs;
}

/** The interval of sample `k` of a window: `lengthMs` long, placed at a spread position, whole seconds. */
export function sampleInterval(window: Interval, lengthMs: number, k: number): Interval {
  const windowMs = window.endMs - window.startMs;
  const length = Math.min(windowMs, Math.max(MIN_SAMPLE_MS, lengthMs));
  const offset = ((k * GOLDEN) % 1) * (windowMs - length);
  const startMs = secondAfter(window.startMs + offset - 1);
  const endMs = Math.max(startMs + SECOND_MS, floorSecond(Math.min(window.endMs, startMs + length)));
  return { startMs, endMs };
}

export interface SampleStep {
  window: Interval;
  interval: Interval;
}

/** The samples of one `--sample N`, each placed after the answers before it. */
export class SampleSchedule {
  private readonly order: Interval[];
  private readonly lengths = new Map<Interval, number>();
  private readonly counted = new Set<Interval>();
  private k = 0;
  /** Events per ms the answers so far showed (the latest below the cap, raised by a denser full one). */
  private rate: number | null = null;

  /** `earlier`: samples a previous `--sample` paid for; each window goes on from what they showed. */
  constructor(windows: readonly Interval[], n: number, earlier: readonly SampleCount[] = []) {
    this.order = sampleWindows(windows, n);
    for (const w of windows) {
      const windowMs = w.endMs - w.startMs;
      const inside = earlier.filter((s) => s.interval.startMs >= w.startMs && s.interval.endMs <= w.endMs);
      const next = inside.map((s) => {
        const lengthMs = s.interval.endMs - s.interval.startMs;
        return nextLengthMs(lengthMs, s.events, lengthMs, windowMs);
      });
      if (next.length > 0) this.lengths.set(w, Math.min(...next));
    }
    for (const e of earlier) this.learnRate(e.interval.endMs - e.interval.startMs, e.events);
  }

  /**
   * A window's first sample: the whole of it, where a count below the cap is exact, unless the
   * answers so far show it holds several caps; then a stretch expected to hold half a cap.
   */
  private firstLengthMs(window: Interval): number {
    const windowMs = window.endMs - window.startMs;
    if (this.rate === null || this.rate * windowMs < CAP) return LIMITS.maxWindowDays * DAY_MS;
    return Math.min(windowMs, CAP / 2 / this.rate);
  }

  private learnRate(lengthMs: number, returned: number): void {
    if (lengthMs <= 0) return;
    const rate = returned / lengthMs;
    if (returned < CAP) this.rate = returned > 0 ? rate : this.rate;
    else this.rate = Math.max(this.rate ?? 0, rate);
  }

  /** The next sample, or null when the N are used; a window counted whole is skipped (no call made). */
  next(): SampleStep | null {
    while (this.k < this.order.length) {
      const k = this.k++;
      const window = this.order[k]!;
      if (this.counted.has(window)) continue;
      const lengthMs = this.lengths.get(window) ?? this.firstLengthMs(window);
      return { window, interval: sampleInterval(window, lengthMs, k) };
    }
    return null;
  }

  /** What the answer to `step` held: its size, and the time from its first event to its last. */
  answered({ window, interval }: SampleStep, returned: number, spanMs: number): void {
    const whole = interval.startMs <= window.startMs + SECOND_MS && interval.endMs >= window.endMs - SECOND_MS;
    if (whole && returned < CAP) this.counted.add(window);
    const lengthMs = interval.endMs - interval.startMs;
    this.learnRate(lengthMs, returned);
    this.lengths.set(window, nextLengthMs(lengthMs, returned, spanMs, window.endMs - window.startMs));
  }
}
