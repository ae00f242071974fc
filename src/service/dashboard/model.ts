/**
 * What the status page shows, computed from the query results. Pure: the clock and every input are
 * arguments, so the page's numbers are tested without a browser or a database.
 */
import type { ResolvedJobsFile } from '../../config/jobs-file.js';
import { declaredStreams, type Declared } from '../declared-streams.js';
import type { StreamFreshness } from '../../db/queries/freshness.js';
import type { StreamStatus } from '../../db/queries/status.js';
import { PARTITION_STATE, type PartitionState } from '../../domain/partition.js';
import { coverageOf, subtractRanges, type Adjacency, type Range } from '../../domain/ranges.js';
import { DAY_MS } from '../../domain/time.js';
import type { BackfillRow, DailyBilled, StateRanges } from './queries.js';
import { utcDay } from './queries.js';

export const CHART_DAYS = 30;

/** Drawn in this order: a later layer lies on top. Done time is taken out of the others. */
export const LAYER_ORDER: readonly PartitionState[] = [
  PARTITION_STATE.done,
  PARTITION_STATE.pending,
  PARTITION_STATE.running,
  PARTITION_STATE.partial,
  PARTITION_STATE.failed,
];

export interface Timeline {
  unit: 'time' | 'year';
  /** Epoch ms or years, both ends inclusive. */
  range: Range;
  layers: Array<{ state: PartitionState; ranges: Range[] }>;
  /** Share of the range in done partitions, as `gateway-ingest status` counts it. */
  coveredFraction: number;
  /** Everything not done: never planned, waiting, failed or partial. */
  gaps: Range[];
}

export interface StreamView {
  status: StreamStatus;
  schedule: string | null;
  enabled: boolean | null;
  freshness: { kind: 'time'; newest: number | null } | { kind: 'year'; lastYear: number | null };
  timeline: Timeline | null;
}

export interface DayBar {
  day: string;
  byOperation: Record<string, number>;
  total: number;
}

export interface BudgetView {
  /** BILLED_CALLS_PER_DAY; null: no daily cap. */
  cap: number | null;
  usedToday: number;
  left: number | null;
  today: string;
}

export interface PageModel {
  nowMs: number;
  streams: StreamView[];
  days: DayBar[];
  budget: BudgetView;
  backfills: BackfillRow[];
}

export interface PageInputs {
  nowMs: number;
  status: StreamStatus[];
  freshness: Map<string, StreamFreshness>;
  ranges: StateRanges[];
  file: ResolvedJobsFile | null;
  daily: DailyBilled[];
  backfills: BackfillRow[];
  dayBudgetUsed: number;
  billedCallsPerDay: number | null;
}

/** The non-done layers lose what a done partition covers: that time is ingested. */
function layersWithin(range: Range, byState: Map<PartitionState, Range[]>, adjacency: Adjacency): Timeline['layers'] {
  const done = coverageOf(range, byState.get(PARTITION_STATE.done) ?? [], adjacency).covered;
  return LAYER_ORDER.map((state) => {
    const clipped = coverageOf(range, byState.get(state) ?? [], adjacency).covered;
    const ranges =
      state === PARTITION_STATE.done ? clipped : clipped.flatMap((r) => subtractRanges(r, done, adjacency));
    return { state, ranges };
  });
}

export function buildTimeline(
  unit: Timeline['unit'],
  range: Range | null,
  byState: Map<PartitionState, Range[]>,
): Timeline | null {
  if (range === null || range.start > range.end) return null;
  const adjacency: Adjacency = unit === 'year' ? 1 : 0;
  const c = coverageOf(range, byState.get(PARTITION_STATE.done) ?? [], adjacency);
  return {
    unit,
    range,
    layers: layersWithin(range, byState, adjacency),
    coveredFraction: c.coveredFraction,
    gaps: c.gaps,
  };
}

function extent(byState: Map<PartitionState, Range[]>): Range | null {
  const all = [...byState.values()].flat();
  if (all.length === 0) return null;
  return { start: Math.min(...all.map((r) => r.start)), end: Math.max(...all.map((r) => r.end)) };
}

/**
 * From backfill_from (or the first partition) to now; years from jobs.yaml (or the partitions).
 * "Ingested" is what was proven complete (coverage_proofs), so a window being read again still
 * shows as ingested; queued, running and failed come from the partitions.
 */
function timelineOf(
  operation: string,
  d: Declared | undefined,
  ranges: StateRanges[],
  nowMs: number,
  proven: Range[] | null,
): Timeline | null {
  const earthquake = operation === 'earthquake';
  const byState = new Map(ranges.map((r) => [r.state, earthquake ? r.windows : r.years] as const));
  if (proven !== null) byState.set(PARTITION_STATE.done, proven);
  if (earthquake) {
    const from =
      d?.range.unit === 'time' && d.range.fromMs !== null ? d.range.fromMs : (extent(byState)?.start ?? null);
    return buildTimeline('time', from === null ? null : { start: from, end: nowMs }, byState);
  }
  const years = d?.range.unit === 'year' ? { start: d.range.from, end: d.range.to } : extent(byState);
  return buildTimeline('year', years, byState);
}

function emptyStatus(streamKey: string, d: Declared): StreamStatus {
  const operation = d.range.unit === 'time' ? 'earthquake' : 'indicator';
  const partitions = { done: 0, pending: 0, running: 0, partial: 0, failed: 0 };
  return {
    streamKey,
    operation,
    name: d.name,
    params: null,
    partitions,
    rowsWritten: 0,
    calls: 0,
    billedCalls: 0,
    billedUnknown: 0,
    units: 0,
    billedCallsToday: 0,
    unitsToday: 0,
    lastSuccessAt: null,
    lastError: null,
    lastErrorKind: null,
    failedPartitions: [],
    partialPartitions: [],
  };
}

function streamViews(i: PageInputs): StreamView[] {
  const declared = i.file ? declaredStreams(i.file, new Date(i.nowMs).getUTCFullYear()) : new Map<string, Declared>();
  const known = new Set(i.status.map((s) => s.streamKey));
  const missing = [...declared].filter(([key]) => !known.has(key)).map(([key, d]) => emptyStatus(key, d));
  return [...i.status, ...missing].map((s) => {
    const d = declared.get(s.streamKey);
    const f = i.freshness.get(s.streamKey);
    const freshness: StreamView['freshness'] =
      s.operation === 'earthquake'
        ? { kind: 'time', newest: f?.newestEventTime?.getTime() ?? null }
        : { kind: 'year', lastYear: f?.lastValueYear ?? null };
    const ranges = i.ranges.filter((r) => r.streamKey === s.streamKey);
    const status = { ...s, name: d?.name ?? s.name };
    const proven = f
      ? s.operation === 'earthquake'
        ? f.doneWindows.map((w) => ({ start: w.startMs, end: w.endMs }))
        : f.doneYears
      : null;
    return {
      status,
      schedule: d?.schedule ?? null,
      enabled: d?.enabled ?? null,
      freshness,
      timeline: timelineOf(s.operation, d, ranges, i.nowMs, proven),
    };
  });
}

/** The last CHART_DAYS UTC days, today included, oldest first; days without calls are zero. */
export function dayBars(daily: DailyBilled[], nowMs: number): DayBar[] {
  const days = Array.from({ length: CHART_DAYS }, (_, k) => utcDay(nowMs - (CHART_DAYS - 1 - k) * DAY_MS));
  return days.map((day) => {
    const byOperation: Record<string, number> = {};
    for (const d of daily.filter((x) => x.day === day))
      byOperation[d.operation] = (byOperation[d.operation] ?? 0) + d.billedCalls;
    return { day, byOperation, total: Object.values(byOperation).reduce((a, b) => a + b, 0) };
  });
}

export function firstChartDay(nowMs: number): string {
  return utcDay(nowMs - (CHART_DAYS - 1) * DAY_MS);
}

export function buildPageModel(i: PageInputs): PageModel {
  const cap = i.billedCallsPerDay;
  return {
    nowMs: i.nowMs,
    streams: streamViews(i),
    days: dayBars(i.daily, i.nowMs),
    budget: {
      cap,
      usedToday: i.dayBudgetUsed,
      left: cap === null ? null : cap - i.dayBudgetUsed,
      today: utcDay(i.nowMs),
    },
    backfills: i.backfills,
  };
}
