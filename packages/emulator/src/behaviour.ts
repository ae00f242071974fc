import { EVENT_ORDERS, type EventOrder } from './selection.js';
import { LIMITS } from './spec.js';

/**
 * How the emulated gateway reads an earthquake request and writes its answer, within what the
 * spec allows: which events a truncated answer keeps, whether the window ends are inclusive,
 * whether sub-second parts count, how precise reported times are, and a hidden result cap.
 */
export const TIME_PRECISIONS = ['ms', 'second', 'ten-seconds', 'minute', 'hour', 'day'] as const;
export type TimePrecision = (typeof TIME_PRECISIONS)[number];

export const BOUNDARIES = ['inclusive', 'exclusive'] as const;
export type Boundary = (typeof BOUNDARIES)[number];

export interface AnswerBehaviour {
  order: EventOrder;
  /** Chance that a 'mixed' call keeps a random subset rather than the newest events. */
  mixedRandomRatio: number;
  timePrecision: TimePrecision;
  startBoundary: Boundary;
  endBoundary: Boundary;
  /** Whether an event exactly at min_magnitude matches (the spec does not say). */
  minMagnitudeBoundary: Boundary;
  ignoreFractionalSeconds: boolean;
  /** null: answers hold up to max_results events. */
  silentCap: number | null;
}

export type BehaviourOptions = Partial<Omit<AnswerBehaviour, 'silentCap'>> & { silentCap?: number | undefined };

function oneOf<T extends string>(name: string, allowed: readonly T[], value: T): T {
  if (!allowed.includes(value))
    throw new RangeError(`${name} must be one of ${allowed.join(', ')}, got ${String(value)}`);
  return value;
}

export const checkOrder = (order: EventOrder): EventOrder => oneOf('order', EVENT_ORDERS, order);
export const checkTimePrecision = (p: TimePrecision): TimePrecision => oneOf('timePrecision', TIME_PRECISIONS, p);
export const checkBoundary = (name: 'startBoundary' | 'endBoundary' | 'minMagnitudeBoundary', b: Boundary): Boundary =>
  oneOf(name, BOUNDARIES, b);

export function checkRatio(ratio: number): number {
  if (!(typeof ratio === 'number' && ratio >= 0 && ratio <= 1)) {
    throw new RangeError(`mixedRandomRatio must be a number from 0 to 1, got ${ratio}`);
  }
  return ratio;
}

export function checkFlag(name: string, value: boolean): boolean {
  if (typeof value !== 'boolean') throw new RangeError(`${name} must be true or false, got ${String(value)}`);
  return value;
}

export function checkSilentCap(cap: number | null | undefined): number | null {
  if (cap === undefined || cap === null) return null;
  if (!(Number.isInteger(cap) && cap >= 1 && cap <= LIMITS.maxResultsCeiling)) {
    throw new RangeError(`silentCap must be a whole number from 1 to ${LIMITS.maxResultsCeiling}, got ${cap}`);
  }
  return cap;
}

/** Defaults filled in and every value checked (RangeError naming the option). */
export function resolveBehaviour(o: BehaviourOptions): AnswerBehaviour {
  return {
    order: checkOrder(o.order ?? 'newest'),
    mixedRandomRatio: checkRatio(o.mixedRandomRatio ?? 0.2),
    timePrecision: checkTimePrecision(o.timePrecision ?? 'ms'),
    startBoundary: checkBoundary('startBoundary', o.startBoundary ?? 'inclusive'),
    endBoundary: checkBoundary('endBoundary', o.endBoundary ?? 'inclusive'),
    minMagnitudeBoundary: checkBoundary('minMagnitudeBoundary', o.minMagnitudeBoundary ?? 'inclusive'),
    ignoreFractionalSeconds: checkFlag('ignoreFractionalSeconds', o.ignoreFractionalSeconds ?? false),
    silentCap: checkSilentCap(o.silentCap),
  };
}

/** Start of the whole second holding `ms` (floor, so times before 1970 truncate the ISO way). */
export function wholeSecondMs(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/**
 * The request window as inclusive bounds in epoch ms, the way the catalog index takes it. Event
 * times are whole milliseconds, so an exclusive end at t is an inclusive one at t - 1.
 */
export function matchWindow(startMs: number, endMs: number, b: AnswerBehaviour): { startMs: number; endMs: number } {
  const start = b.ignoreFractionalSeconds ? wholeSecondMs(startMs) : startMs;
  const end = b.ignoreFractionalSeconds ? wholeSecondMs(endMs) : endMs;
  return {
    startMs: b.startBoundary === 'exclusive' ? start + 1 : start,
    endMs: b.endBoundary === 'exclusive' ? end - 1 : end,
  };
}

/** How many events an answer may hold: max_results, or less under a silent cap. */
export function answerLimit(maxResults: number, b: AnswerBehaviour): number {
  return b.silentCap === null ? maxResults : Math.min(maxResults, b.silentCap);
}

const PRECISION_MS: Record<TimePrecision, number> = {
  ms: 1,
  second: 1000,
  'ten-seconds': 10_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** An event time as the answer reports it: truncated to the precision (floor, as for whole seconds). */
export function reportedTime(ms: number, precision: TimePrecision): string {
  const unit = PRECISION_MS[precision];
  return new Date(Math.floor(ms / unit) * unit).toISOString();
}
