import type { EarthquakeEvent } from './spec.js';
import type { TileSpec } from './catalog-index.js';
import type { FaultKind, FaultRule } from './faults.js';
import type { Boundary, TimePrecision } from './behaviour.js';
import type { EventOrder, KeepOrder } from './selection.js';
import type { SwarmSpec } from './swarm.js';
import type { IndicatorDataset } from './worldbank.js';
import type { IndicatorRevision, IndicatorRevisionResult } from './indicator-store.js';
import type { LiveChange, LiveCounts, LiveWindow } from './live-catalog.js';
import type { LiveSpec } from './live-timer.js';
import { type Operation } from './spec.js';

export interface EmulatorOptions {
  /** The one credential accepted (spec part 5). Never logged or echoed. */
  key: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the emulator is for local tests and demos, never exposed. */
  host?: string;
  /** USGS CSV or GeoJSON files, merged; default: the bundled fixtures. `[]` serves no events. */
  earthquakeFiles?: string[];
  /** Already loaded events, used instead of `earthquakeFiles` (tests with hand-made catalogs). */
  events?: EarthquakeEvent[];
  tile?: TileSpec;
  /** World Bank bulk CSV files; default: the bundled fixtures. */
  indicatorFiles?: string[];
  /** Already loaded datasets, used instead of `indicatorFiles`. */
  indicators?: IndicatorDataset[];
  /** Which events a capped earthquake answer holds, and their order. Default 'newest'. */
  order?: EventOrder;
  /** With order 'mixed': chance per call of keeping a random subset instead of the newest. 0..1, default 0.2. */
  mixedRandomRatio?: number;
  /** 'second' reports every event time truncated to the whole second (filtering keeps the exact time). Default 'ms'. */
  timePrecision?: TimePrecision;
  /** Whether an event exactly at start_time matches. Default 'inclusive'. */
  startBoundary?: Boundary;
  /** Whether an event exactly at end_time matches. Default 'inclusive'. */
  endBoundary?: Boundary;
  /** Whether an event exactly at min_magnitude matches. Default 'inclusive'. */
  minMagnitudeBoundary?: Boundary;
  /** Truncate the request's start_time and end_time to the whole second before filtering. Default false. */
  ignoreFractionalSeconds?: boolean;
  /** 1..200: answers hold at most min(max_results, silentCap) events, without saying so. Default: none. */
  silentCap?: number;
  /** Synthetic same-second swarms merged into the earthquake catalog (ids `swarm-<second>-<k>`). */
  swarms?: SwarmSpec[];
  /**
   * Live catalog: from start, add, revise and delete events on a timer at these rates, as the
   * real USGS catalog does. Not with `tile`. `mutate` works without it.
   */
  live?: LiveSpec;
  /** Seed for every random choice (order, faults, invocation ids, swarms, live changes). Default: random. */
  seed?: number;
  /** Delay before every answer. */
  latencyMs?: number;
  faults?: FaultRule[];
  /** The gateway's clock: "start_time not in the future", default years, execution timestamps. */
  now?: () => Date;
  /** Seconds announced in `Retry-After` on a `rate_limited` fault. Default 1. */
  retryAfterSeconds?: number;
  /** How an empty `events` list is written; the spec allows both. Default 'array'. (`values` is never empty: every requested year is answered.) */
  emptyAs?: 'array' | 'null';
}

/** What the emulator did with one request; tests compare an ingest audit against this log. */
export interface EmulatorCall {
  /** When the request arrived, by the emulator's `now`. */
  at: Date;
  /** null when the path is not an operation path. */
  operation: Operation | null;
  path: string;
  /** Parsed JSON body as received (invocation_id included), the raw text if not JSON, null if empty. */
  body: unknown;
  hadInvocationId: boolean;
  authorized: boolean;
  /** null when the connection was reset without an answer. */
  httpStatus: number | null;
  /** `data.execution.outcome` as generated; null when no execution took place. */
  outcome: string | null;
  billed: boolean;
  /** Units billed (0 unless billed). */
  units: number;
  /** Events or values in the generated result. */
  returned: number;
  /** Events or values that matched before the `max_results` cap. */
  matched: number;
  /** True when more events matched than the answer holds (by max_results or a silent cap). */
  truncated: boolean;
  /**
   * The keep-order an earthquake answer used ('mixed' resolved to 'random' or 'newest'), recorded
   * whether or not it was truncated; null when no earthquake result was delivered.
   */
  order: KeepOrder | null;
  executionId: string | null;
  fault: FaultKind | null;
}

export interface RunningEmulator {
  /** The spec's {base_url}, without a trailing slash. */
  url: string;
  close(): Promise<void>;
  /** Live log, oldest first; the same array for the emulator's whole life. */
  calls: EmulatorCall[];
  resetCalls(): void;
  setOrder(order: EventOrder): void;
  setMixedRandomRatio(ratio: number): void;
  setTimePrecision(precision: TimePrecision): void;
  setStartBoundary(boundary: Boundary): void;
  setEndBoundary(boundary: Boundary): void;
  setIgnoreFractionalSeconds(ignore: boolean): void;
  /** undefined or null lifts the cap. */
  setSilentCap(cap: number | null | undefined): void;
  /** Replaces every swarm (rebuilds the catalog index; the file events stay). */
  setSwarms(swarms: SwarmSpec[]): void;
  setLatencyMs(ms: number): void;
  /** The next `count` eligible requests get this fault, before any probabilistic rule. */
  injectFaults(kind: FaultKind, count: number): void;
  setFaultRules(rules: FaultRule[]): void;
  /**
   * Starts (or restarts) the live timer with `spec`, else with the `live` option; the default
   * window is fixed now, from the file and swarm events. RangeError when tiled or without a spec.
   */
  startLive(spec?: LiveSpec): void;
  /** Stops the timer; the changes made so far stay. */
  stopLive(): void;
  /** Applies changes at once, without the timer (deterministic tests); returns them. Not when tiled. */
  mutate(counts: LiveCounts, window?: LiveWindow): LiveChange[];
  /** The untiled earthquake catalog as served now, oldest first (ties by id). */
  currentEvents(): EarthquakeEvent[];
  /** Every live change (timer and `mutate`), oldest first; the same array for the emulator's whole life. */
  changes: LiveChange[];
  /** Changes one value of a series and its `last_updated` (default: today by the emulator clock). */
  reviseIndicator(revision: Omit<IndicatorRevision, 'lastUpdated'> & { lastUpdated?: string }): IndicatorRevisionResult;
}
