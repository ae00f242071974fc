/**
 * What a backfill will cost before it is paid for: billed calls, units and wall time, each as a
 * range. Pure: event counts, measured factors and latency come from the caller.
 *
 * A window of n events costs at least its ideal, max(1, ceil(n / 200)) billed calls: one answer
 * holds at most 200 events, and an empty window still takes one call. A window under the cap costs
 * exactly one call (an answer smaller than the cap proves itself complete); a fuller one costs its
 * ideal times an *order factor*: the follow-ups the gateway's truncation order forces
 * (docs/design.md, "Cost": about 1.4 newest-first, up to 2 for other orders). The factor is measured
 * on done windows of the same or a wider stream when there are any.
 */
import type { Interval } from '../domain/interval.js';
import { LIMITS, yearSpan } from '../domain/spec.js';
import type { YearChunk } from './chunks.js';
import { windowEvents, type Counted, type DensityKind, type EventRange, type RatePool } from './density.js';
import { MAX_PROBE_PLACES } from './truncation/cap.js';

export const CAP = LIMITS.maxResultsCeiling;

export interface Estimate {
  low: number;
  expected: number;
  high: number;
}

export interface OrderFactor {
  expected: number;
  high: number;
  /** Full windows the factor was measured on; 0: the defaults. */
  measuredWindows: number;
}

/**
 * Without measurements: what a first read costs against a newest-first gateway on the real months
 * (docs/design.md, "Cost": 1.37), rounded up, and the bound for any order as the high end.
 */
export const DEFAULT_ORDER_FACTOR: OrderFactor = { expected: 1.4, high: 2.5, measuredWindows: 0 };
/**
 * A window whose events are stored and proven complete (for its stream or a wider one) is read with
 * chunks sized from them, whatever the gateway's order (docs/design.md, "Cost": a re-read 1.10).
 */
export const STORED_ORDER_FACTOR: OrderFactor = { expected: 1.1, high: 1.4, measuredWindows: 0 };
/** The bound docs/design.md "Cost" asserts for every order the pipeline is sound against. */
export const ANY_ORDER_FACTOR = 2.5;
/** Fewer full windows than this measure too little to narrow the high end. */
const MIN_MEASURED_WINDOWS = 3;
/** How far a measured factor may drift (a gateway changes its ways): the high end allows this much more. */
const MEASURED_HEADROOM = 1.5;
/** Used when the audit holds no succeeded call to measure latency on. */
export const DEFAULT_LATENCY_MS = 500;
/**
 * Time a worker spends per call besides the HTTP round trip (the answer transaction: a full answer
 * upserts 200 events), used until the audit shows how far apart a window's calls really are.
 */
export const PER_CALL_OVERHEAD_MS = 50;

export function idealCalls(events: number): number {
  return Math.max(1, Math.ceil(events / CAP));
}

/** A window whose first answer may be truncated, so its cost depends on the order. */
function isFull(events: number): boolean {
  return events >= CAP;
}

export interface MeasuredWindow {
  /** Events of the window, counted with its stream's filters. */
  events: number;
  /** Billed calls spent on it, cap probes left out. */
  billedCalls: number;
  /** Units of those calls. */
  units: number;
}

/** Billed calls of done full windows against their ideal; the defaults when none was full. */
export function orderFactor(windows: readonly MeasuredWindow[]): OrderFactor {
  const full = windows.filter((w) => isFull(w.events) && w.billedCalls > 0);
  if (full.length === 0) return DEFAULT_ORDER_FACTOR;
  const expected = Math.max(
    1,
    full.reduce((n, w) => n + w.billedCalls, 0) / full.reduce((n, w) => n + idealCalls(w.events), 0),
  );
  const high =
    full.length < MIN_MEASURED_WINDOWS
      ? Math.max(expected, ANY_ORDER_FACTOR)
      : Math.max(expected, Math.min(ANY_ORDER_FACTOR, expected * MEASURED_HEADROOM));
  return { expected, high, measuredWindows: full.length };
}

export interface UnitsFactor {
  /** Units (events returned) per event of a full window: follow-ups return some events again. */
  expected: number;
  high: number;
}

export const DEFAULT_UNITS_FACTOR: UnitsFactor = { expected: 1.1, high: ANY_ORDER_FACTOR };

export function unitsFactor(windows: readonly MeasuredWindow[]): UnitsFactor {
  const full = windows.filter((w) => isFull(w.events) && w.units > 0);
  if (full.length === 0) return DEFAULT_UNITS_FACTOR;
  const expected = Math.max(1, full.reduce((n, w) => n + w.units, 0) / full.reduce((n, w) => n + w.events, 0));
  return { expected, high: Math.max(expected * MEASURED_HEADROOM, DEFAULT_UNITS_FACTOR.expected) };
}

/** One window's billed calls from its event range. */
export function windowCalls(events: EventRange, order: OrderFactor): Estimate {
  const at = (n: number, factor: number) => (isFull(n) ? idealCalls(n) * factor : 1);
  return { low: at(events.low, 1), expected: at(events.expected, order.expected), high: at(events.high, order.high) };
}

/** One window's units (events returned): every event once under the cap, more with follow-ups. */
export function windowUnits(events: EventRange, calls: Estimate, units: UnitsFactor): Estimate {
  const at = (n: number, factor: number, maxCalls: number) => (isFull(n) ? Math.min(n * factor, maxCalls * CAP) : n);
  return {
    low: events.low,
    expected: at(events.expected, units.expected, calls.expected),
    high: at(events.high, units.high, calls.high),
  };
}

export function sumEstimates(list: readonly Estimate[]): Estimate {
  return list.reduce((a, b) => ({ low: a.low + b.low, expected: a.expected + b.expected, high: a.high + b.high }), {
    low: 0,
    expected: 0,
    high: 0,
  });
}

/** Whole calls: the low end down, the high end up, the expectation to the nearest (never -0: it prints as "-0"). */
export function rounded(e: Estimate): Estimate {
  const whole = (v: number) => v + 0;
  return {
    low: whole(Math.floor(e.low + 1e-9)),
    expected: whole(Math.round(e.expected)),
    high: whole(Math.ceil(e.high - 1e-9)),
  };
}

/**
 * When no probe place proves the cap, an answer below max_results counts as full and its window is
 * read again in parts, each below the largest answer seen: a few calls more in a sparse catalog.
 */
const UNPROVEN_SPLIT_CALLS = 4;

/**
 * Cap probes (billed calls over unfiltered months) while the gateway's cap is unknown: one expected,
 * possible (none expected), or none (the cap is known).
 */
export type CapProbe = 'expected' | 'possible' | 'none';

/** What is known of one planned window's events. */
export interface WindowCount {
  window: Interval;
  /** Counted in it: stored parts and samples below the cap (see countedInWindow). */
  counted: Counted;
  /** Full samples inside it apart from what was counted (see boundInWindow), or null. */
  bound: Counted | null;
  /** Stored whole and proven for this or a wider stream: read with chunks sized from its events. */
  stored: boolean;
}

/** Billed calls of each window and the probe, and the totals; no figures when a window's density is unknown. */
export type EarthquakeCost =
  | { kinds: DensityKind[]; calls: null }
  | { kinds: DensityKind[]; calls: Estimate[]; totalCalls: Estimate; totalUnits: Estimate };

/**
 * Billed calls and units of an earthquake backfill. Probes are never in the low end: they are made
 * only when an answer's size leaves the cap in question, and none may. The high end allows for a
 * catalog sparse around every window, where each read asks every place it may probe and, none
 * proving the cap, reads its window again in parts.
 */
export function earthquakeCost(
  counts: readonly WindowCount[],
  pool: RatePool | null,
  factors: { order: OrderFactor; units: UnitsFactor },
  probe: CapProbe,
): EarthquakeCost {
  const perWindow = counts.map((c) => windowEvents(c.window, c.counted, pool, c.bound));
  const kinds = perWindow.map((w) => w.kind);
  if (perWindow.some((w) => w.events === null)) return { kinds, calls: null };
  const calls = perWindow.map((w, i) =>
    windowCalls(w.events!, counts[i]!.stored ? STORED_ORDER_FACTOR : factors.order),
  );
  const unitsPer = perWindow.map((w, i) => windowUnits(w.events!, calls[i]!, factors.units));
  const probeCost: Estimate = {
    low: 0,
    expected: probe === 'expected' ? 1 : 0,
    high: probe === 'none' ? 0 : (MAX_PROBE_PLACES + UNPROVEN_SPLIT_CALLS) * counts.length,
  };
  const asUnits = (e: Estimate): Estimate => ({ low: e.low * CAP, expected: e.expected * CAP, high: e.high * CAP });
  return {
    kinds,
    calls: [...calls, probeCost],
    totalCalls: sumEstimates([...calls, probeCost]),
    totalUnits: sumEstimates([...unitsPer, asUnits(probeCost)]),
  };
}

export interface WallTimeArgs {
  /** Expected billed calls of each window or chunk (calls within one run one after another). */
  callsPerPartition: readonly number[];
  concurrency: number;
  /** Calls one window may have in flight at once (WINDOW_LANES). */
  lanes: number;
  latencyMs: number;
  /** Measured time from one call of a window to its next (latency, answer transaction, lanes); null: not measured. */
  cycleMs: number | null;
}

/**
 * Wall seconds: the calls spread over `concurrency` workers, but never less than the longest
 * partition, whose calls follow one another (up to `lanes` at once once a walk's rate is known, which a
 * measured cycle already reflects).
 */
export function wallSeconds({ callsPerPartition, concurrency, lanes, latencyMs, cycleMs }: WallTimeArgs): number {
  const total = callsPerPartition.reduce((n, c) => n + c, 0);
  const longest = callsPerPartition.reduce((m, c) => Math.max(m, c), 0);
  const perCallMs = cycleMs ?? latencyMs + PER_CALL_OVERHEAD_MS;
  const sequential = cycleMs === null ? longest / Math.max(1, lanes) : longest;
  const rounds = Math.max(total / Math.max(1, concurrency), sequential, total > 0 ? 1 : 0);
  return (rounds * perCallMs) / 1000;
}

/** Median of the values; null when there are none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Billed calls of each indicator chunk: one, or as many as the gateway's recent answers took a
 * chunk (`callsPerChunk`: a gateway leaving years out of an answer is asked for them again), never
 * more than the chunk has years.
 */
export function indicatorChunkCalls(chunks: readonly YearChunk[], callsPerChunk = 1): number[] {
  return chunks.map((c) => Math.min(yearSpan(c.startYear, c.endYear), Math.max(1, callsPerChunk)));
}

/** Indicator chunks' billed calls (`indicatorChunkCalls`); points are the years asked for (null values included). */
export function indicatorEstimate(
  chunks: readonly YearChunk[],
  pointsPerYear: number,
  callsPerChunk = 1,
): { calls: Estimate; units: Estimate } {
  const years = chunks.reduce((n, c) => n + yearSpan(c.startYear, c.endYear), 0);
  const points = years * pointsPerYear;
  const sum = (xs: readonly number[]) => xs.reduce((n, c) => n + c, 0);
  return {
    calls: {
      low: chunks.length,
      expected: sum(indicatorChunkCalls(chunks, callsPerChunk)),
      high: sum(indicatorChunkCalls(chunks, Math.ceil(callsPerChunk))),
    },
    units: { low: Math.min(points, years), expected: points, high: Math.max(points, years) },
  };
}
