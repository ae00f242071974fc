/**
 * The plan of a backfill before anything is paid for or enqueued: the partitions it would fetch and
 * those already covered, and what they would cost, estimated from what is stored (event density of
 * the same or a wider stream, cost of done windows, latency of recent calls). Reads only.
 */
import type { Db } from '../db/connection.js';
import { readGatewayFacts } from '../db/gateway-knowledge.js';
import { doneCoverage } from '../db/partitions.js';
import {
  countEvents,
  doneWindows,
  earthquakeStreams,
  indicatorHistory,
  medianCallCycleMs,
  medianLatencyMs,
  sampleAnswers,
  type DoneWindow,
} from '../db/queries/plan.js';
import type { EarthquakeFilters } from '../domain/filters.js';
import type { Interval } from '../domain/interval.js';
import type { Range } from '../domain/ranges.js';
import { LIMITS, OPERATIONS, type Operation } from '../domain/spec.js';
import { DAY_MS } from '../domain/time.js';
import { earthquakeStream, indicatorStream } from '../domain/streams.js';
import { planChunks } from '../planning/chunks.js';
import {
  boundInWindow,
  countedInWindow,
  coveredPartsOf,
  isWiderOrEqual,
  piecesOf,
  ratePool,
  samplePieces,
  unionOf,
  type Counted,
  type DensityKind,
  type SampleCount,
} from '../planning/density.js';
import {
  CAP,
  DEFAULT_LATENCY_MS,
  earthquakeCost,
  indicatorChunkCalls,
  indicatorEstimate,
  orderFactor,
  rounded,
  unitsFactor,
  wallSeconds,
  type CapProbe,
  type Estimate,
  type MeasuredWindow,
  type OrderFactor,
} from '../planning/estimate.js';
import { planWindows } from '../planning/windows.js';
import type { EarthquakeBackfill, IndicatorBackfill } from './enqueue-backfill.js';

/** What one `backfill` command asks for, before it is enqueued. */
export type BackfillRequest =
  ({ operation: 'earthquake' } & EarthquakeBackfill) | ({ operation: 'indicator' } & IndicatorBackfill);

export interface PlanSettings {
  nowMs: number;
  /** WORKER_CONCURRENCY and WINDOW_LANES: how many calls run at once. */
  concurrency: number;
  lanes: number;
  /** `<GATEWAY_BASE_URL>|earthquake`, to tell whether a cap probe is due; null when no gateway is configured. */
  gatewayKey: string | null;
  knowledgeTtlMs: number;
}

export interface StreamPlan {
  streamKey: string;
  /** Windows (or year chunks) to fetch. */
  windows: number;
  /** Done windows (or chunks) of the stream inside the range, not fetched again. */
  windowsCovered: number;
}

export interface DensityReport {
  /**
   * Windows whose events are all stored (exact count), partly stored or sampled (scaled), judged
   * from other windows (extrapolated), or not at all.
   */
  windows: Record<DensityKind, number>;
  /** Streams whose stored events were counted (this one, or wider ones). */
  sourceStreams: string[];
  /** Earlier `--sample` answers of this stream used. */
  samples: number;
}

export interface Plan {
  operation: Operation;
  streams: StreamPlan[];
  windows: number;
  windowsCovered: number;
  /** null when no event density is known (nothing stored, no sample): see `minimumBilledCalls`. */
  estimatedBilledCalls: Estimate | null;
  estimatedUnits: (Estimate & { unit: string }) | null;
  estimatedSeconds: number | null;
  /** One call per window at the very least, whatever the density. */
  minimumBilledCalls: number;
  density: DensityReport | null;
  orderFactor: OrderFactor | null;
  /**
   * A cap probe (one billed call) is due before the first window: yes, maybe (no gateway configured
   * to ask about), no.
   */
  capProbe: CapProbe;
  latencyMs: number;
  latencySource: 'measured' | 'default';
  /** Median time from one call of a window to its next, when measured (it sets the pace of a window). */
  callCycleMs: number | null;
  concurrency: number;
  /** Earthquake windows to fetch and how their density is known (what `--sample` targets); not printed. */
  plannedWindows: Array<{ window: Interval; density: DensityKind }>;
}

/** At most this many done windows per stream are measured for the order factor (the newest). */
const MEASURED_PER_STREAM = 300;
/** Rate pieces are at most a window long. */
const PIECE_MS = LIMITS.maxWindowDays * DAY_MS;
/** Unfiltered windows at least this long prove the cap with their first answer (worker/gateway-facts.ts). */
const SELF_PROVING_MS = 7 * DAY_MS;

export async function planBackfill(db: Db, request: BackfillRequest, settings: PlanSettings): Promise<Plan> {
  return request.operation === 'earthquake'
    ? planEarthquakes(db, request, settings)
    : planIndicators(db, request, settings);
}

const tenths = (x: number) => Math.round(x * 10) / 10;

function countWithin(done: readonly { startMs: number; endMs: number }[], fromMs: number, toMs: number): number {
  return done.filter((w) => w.startMs <= toMs && w.endMs >= fromMs).length;
}

async function latency(
  db: Db,
  operation: Operation,
): Promise<Pick<Plan, 'latencyMs' | 'latencySource' | 'callCycleMs'>> {
  const ms = await medianLatencyMs(db, operation);
  const cycle = await medianCallCycleMs(db, operation);
  return {
    ...(ms === null
      ? { latencyMs: DEFAULT_LATENCY_MS, latencySource: 'default' as const }
      : { latencyMs: Math.round(ms), latencySource: 'measured' as const }),
    callCycleMs: cycle === null ? null : Math.round(cycle),
  };
}

/** Done windows of the given streams with their events counted under each one's own filters. */
async function measuredWindows(
  db: Db,
  streams: ReadonlyMap<string, EarthquakeFilters>,
  done: readonly DoneWindow[],
): Promise<MeasuredWindow[]> {
  const out: MeasuredWindow[] = [];
  for (const [streamKey, filters] of streams) {
    const mine = done
      .filter((d) => d.streamKey === streamKey)
      .sort((a, b) => b.window.startMs - a.window.startMs)
      .slice(0, MEASURED_PER_STREAM);
    const counts = await countEvents(
      db,
      filters,
      mine.map((d) => d.window),
    );
    mine.forEach((d, i) => out.push({ events: counts[i]!, billedCalls: d.billedCalls, units: d.units }));
  }
  return out;
}

async function capProbe(
  db: Db,
  filters: EarthquakeFilters,
  windows: readonly Interval[],
  s: PlanSettings,
): Promise<CapProbe> {
  if (windows.length === 0) return 'none';
  if (s.gatewayKey !== null) {
    const facts = await readGatewayFacts(db, s.gatewayKey, s.nowMs, s.knowledgeTtlMs);
    if (facts.capFloor >= CAP || facts.measuredCap !== null) return 'none';
  }
  // A long unfiltered window's first answer is a cap of events where the catalog is as dense as
  // the real one: no probe then, but a sparse catalog may need them.
  const filtered = filters.minMagnitude !== null || filters.circle !== null;
  const short = windows.some((w) => w.endMs - w.startMs < SELF_PROVING_MS);
  return filtered || short ? 'expected' : 'possible';
}

/** The window's covered parts (merged, clipped to it) leave no gap of more than a second. */
function coversWhole(parts: readonly Interval[], w: Interval): boolean {
  let reached = w.startMs;
  for (const p of parts) if (p.startMs <= reached + 1000) reached = Math.max(reached, p.endMs);
  return reached + 1000 >= w.endMs;
}

async function planEarthquakes(
  db: Db,
  r: Extract<BackfillRequest, { operation: 'earthquake' }>,
  s: PlanSettings,
): Promise<Plan> {
  const stream = earthquakeStream(r.filters);
  const done = r.refresh ? [] : (await doneCoverage(db, stream.streamKey)).windows;
  const windows = r.windows ?? planWindows({ fromMs: r.fromMs, toMs: r.toMs, coveredMs: done });
  const windowsCovered = r.refresh || r.windows ? 0 : countWithin(done, r.fromMs, r.toMs);

  const sources = new Map(
    (await earthquakeStreams(db))
      .filter((x) => isWiderOrEqual(x.filters, r.filters))
      .map((x) => [x.streamKey, x.filters]),
  );
  const sourceDone = await doneWindows(db, [...sources.keys()]);
  const coverage = unionOf(sourceDone.map((d) => d.window));
  const samples: SampleCount[] = await sampleAnswers(db, stream.streamKey);

  // One counting query for the stored parts of every planned window and for the rate pieces.
  const partsPerWindow = windows.map((w) => coveredPartsOf(w, coverage));
  const storedWhole = windows.map((w, i) => coversWhole(partsPerWindow[i]!, w));
  const pieces = piecesOf(coverage, PIECE_MS);
  const counts = await countEvents(db, r.filters, [...partsPerWindow.flat(), ...pieces]);
  const next = counts.values();
  const take = () => next.next().value ?? 0;
  const counted: Counted[] = partsPerWindow.map((parts, i) => {
    const events = parts.map(take).reduce((n, c) => n + c, 0);
    return countedInWindow(windows[i]!, parts, events, samples);
  });
  const pool = ratePool([
    ...pieces.map((p) => ({ ms: p.endMs - p.startMs, events: take() })),
    ...samplePieces(samples),
  ]);
  const measured = await measuredWindows(db, sources, sourceDone);
  const order = orderFactor(measured);
  const probe = await capProbe(db, r.filters, windows, s);
  const pace = await latency(db, 'earthquake');
  const cost = earthquakeCost(
    windows.map((window, i) => ({
      window,
      counted: counted[i]!,
      bound: boundInWindow(window, samples, partsPerWindow[i]),
      stored: storedWhole[i]!,
    })),
    pool,
    { order, units: unitsFactor(measured) },
    probe,
  );
  const kinds: Record<DensityKind, number> = { exact: 0, scaled: 0, bounded: 0, extrapolated: 0, unknown: 0 };
  for (const k of cost.kinds) kinds[k]++;
  const usedSources = [...new Set(sourceDone.map((d) => d.streamKey))].sort();
  const base = {
    operation: 'earthquake' as const,
    streams: [{ streamKey: stream.streamKey, windows: windows.length, windowsCovered }],
    windows: windows.length,
    windowsCovered,
    minimumBilledCalls: windows.length,
    density: { windows: kinds, sourceStreams: usedSources, samples: samples.length },
    orderFactor: order,
    capProbe: probe,
    ...pace,
    concurrency: s.concurrency,
    plannedWindows: windows.map((window, i) => ({ window, density: cost.kinds[i]! })),
  };
  if (cost.calls === null) return { ...base, estimatedBilledCalls: null, estimatedUnits: null, estimatedSeconds: null };
  const seconds = wallSeconds({
    callsPerPartition: cost.calls.map((c) => c.expected),
    concurrency: s.concurrency,
    // Only a window read again from its stored events is cut into lanes (planning/truncation/lanes.ts).
    lanes: storedWhole.every(Boolean) ? s.lanes : 1,
    latencyMs: pace.latencyMs,
    cycleMs: pace.callCycleMs,
  });
  return {
    ...base,
    estimatedBilledCalls: rounded(cost.totalCalls),
    estimatedUnits: { ...rounded(cost.totalUnits), unit: OPERATIONS.earthquake.unit },
    estimatedSeconds: tenths(seconds),
  };
}

async function planIndicators(
  db: Db,
  r: Extract<BackfillRequest, { operation: 'indicator' }>,
  s: PlanSettings,
): Promise<Plan> {
  const streams: StreamPlan[] = [];
  const chunks: Array<{ startYear: number; endYear: number }> = [];
  for (const indicator of r.indicators) {
    for (const country of r.countries) {
      const stream = indicatorStream({ indicator, country });
      const done: Range[] = r.refresh ? [] : (await doneCoverage(db, stream.streamKey)).years;
      const mine = planChunks({
        fromYear: r.fromYear,
        toYear: r.toYear,
        maxYears: LIMITS.maxYearSpan,
        coveredYears: done,
      });
      chunks.push(...mine);
      streams.push({
        streamKey: stream.streamKey,
        windows: mine.length,
        windowsCovered: done.filter((d) => d.start <= r.toYear && d.end >= r.fromYear).length,
      });
    }
  }
  const history = await indicatorHistory(db);
  const callsPerChunk = history.callsPerChunk ?? 1;
  const estimate = indicatorEstimate(chunks, history.pointsPerYear ?? 1, callsPerChunk);
  const pace = await latency(db, 'indicator');
  return {
    operation: 'indicator',
    streams,
    windows: chunks.length,
    windowsCovered: streams.reduce((n, x) => n + x.windowsCovered, 0),
    estimatedBilledCalls: rounded(estimate.calls),
    estimatedUnits: { ...rounded(estimate.units), unit: OPERATIONS.indicator.unit },
    estimatedSeconds: tenths(
      wallSeconds({
        callsPerPartition: indicatorChunkCalls(chunks, callsPerChunk),
        concurrency: s.concurrency,
        lanes: 1,
        latencyMs: pace.latencyMs,
        cycleMs: null,
      }),
    ),
    minimumBilledCalls: chunks.length,
    density: null,
    orderFactor: null,
    capProbe: 'none',
    ...pace,
    concurrency: s.concurrency,
    plannedWindows: [],
  };
}
