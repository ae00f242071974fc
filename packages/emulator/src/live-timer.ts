import { checkLiveWindow, type LiveCounts, type LiveWindow } from './live-catalog.js';

/** Rates of a live catalog (changes per minute, each >= 0, default 0), played on a timer. */
export interface LiveSpec {
  addPerMinute?: number;
  revisePerMinute?: number;
  deletePerMinute?: number;
  /** Milliseconds between changes, 10 to 3,600,000; default 1000. */
  tickMs?: number;
  /** Where changes happen, both ends inclusive; default: the span of the file and swarm events. */
  window?: LiveWindow;
}

export const LIVE_MAX_PER_MINUTE = 1_000_000;
export const LIVE_TICK_MS = { default: 1000, min: 10, max: 3_600_000 } as const;
const MINUTE_MS = 60_000;

export interface ResolvedLiveSpec {
  perMinute: { add: number; revise: number; delete: number };
  tickMs: number;
  window: LiveWindow | undefined;
}

function rate(name: string, value: number | undefined): number {
  const r = value ?? 0;
  if (!(typeof r === 'number' && r >= 0 && r <= LIVE_MAX_PER_MINUTE)) {
    throw new RangeError(`live ${name} must be a number from 0 to ${LIVE_MAX_PER_MINUTE}, got ${value}`);
  }
  return r;
}

/** Defaults filled in, every value checked (RangeError naming the field). */
export function resolveLiveSpec(spec: LiveSpec): ResolvedLiveSpec {
  if (spec.window) checkLiveWindow(spec.window);
  const tickMs = spec.tickMs ?? LIVE_TICK_MS.default;
  if (!(Number.isInteger(tickMs) && tickMs >= LIVE_TICK_MS.min && tickMs <= LIVE_TICK_MS.max)) {
    throw new RangeError(
      `live tickMs must be a whole number from ${LIVE_TICK_MS.min} to ${LIVE_TICK_MS.max}, got ${spec.tickMs}`,
    );
  }
  return {
    perMinute: {
      add: rate('addPerMinute', spec.addPerMinute),
      revise: rate('revisePerMinute', spec.revisePerMinute),
      delete: rate('deletePerMinute', spec.deletePerMinute),
    },
    tickMs,
    window: spec.window,
  };
}

/**
 * Turns per-minute rates into whole changes per tick. Fractions carry over, so 7 a minute at one
 * tick a second makes exactly 7 changes in 60 ticks, and the counts never depend on wall time.
 */
export class LiveCredit {
  private readonly owed = { add: 0, revise: 0, delete: 0 };

  constructor(private readonly spec: ResolvedLiveSpec) {}

  next(): Required<LiveCounts> {
    const take = (kind: 'add' | 'revise' | 'delete'): number => {
      // Counted in rate x ms so that whole rates stay exact integers.
      this.owed[kind] += this.spec.perMinute[kind] * this.spec.tickMs;
      const n = Math.floor(this.owed[kind] / MINUTE_MS);
      this.owed[kind] -= n * MINUTE_MS;
      return n;
    };
    return { add: take('add'), revise: take('revise'), delete: take('delete') };
  }
}

/** One timer at a time; `start` replaces a running one. Unref'd, so it never keeps a process alive. */
export class LiveTimer {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly apply: (counts: Required<LiveCounts>, window: LiveWindow) => void) {}

  get running(): boolean {
    return this.timer !== null;
  }

  /** `window` is resolved by the caller, so that a tick can never fail on a default it cannot find. */
  start(spec: ResolvedLiveSpec, window: LiveWindow): void {
    this.stop();
    const credit = new LiveCredit(spec);
    this.timer = setInterval(() => this.apply(credit.next(), window), spec.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
