import type { EarthquakeEvent, Operation } from '../gateway/schemas.js';
import type { TileSpec } from './catalog-index.js';
import type { FaultKind, FaultRule } from './faults.js';
import type { EventOrder } from './selection.js';
import type { IndicatorDataset } from './worldbank.js';

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
  /** Seed for every random choice (order, faults, invocation ids). Default: random. */
  seed?: number;
  /** Delay before every answer. */
  latencyMs?: number;
  faults?: FaultRule[];
  /** The gateway's clock: "start_time not in the future", default years, execution timestamps. */
  now?: () => Date;
  /** Seconds announced in `Retry-After` on a `rate_limited` fault. Default 1. */
  retryAfterSeconds?: number;
  /** How an empty `events`/`values` list is written; the spec allows both. Default 'array'. */
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
  truncated: boolean;
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
  setLatencyMs(ms: number): void;
  /** The next `count` eligible requests get this fault, before any probabilistic rule. */
  injectFaults(kind: FaultKind, count: number): void;
  setFaultRules(rules: FaultRule[]): void;
}
