/**
 * What the status page shows, computed from the query results. Pure: the clock and every input are
 * arguments, so the page's numbers are tested without a browser or a database.
 */
import type { ResolvedJobsFile } from '../../config/jobs-file.js';
import { declaredStreamList, type Declared } from '../declared-streams.js';
import type { StreamFreshness } from '../../db/queries/freshness.js';
import { emptyStreamStatus, type StreamStatus } from '../../db/queries/status.js';
import { PARTITION_STATE, type PartitionState } from '../../domain/partition.js';
import { coverageOf, mergeRanges, subtractRanges, type Adjacency, type Range } from '../../domain/ranges.js';
import { currentYearEverywhere, DAY_MS } from '../../domain/time.js';
import {
  cardError,
  groupCards,
  isFailing,
  newestError,
  partState,
  sumCounts,
  worstState,
  type CardError,
  type CardGroup,
  type CardState,
  type PartitionCounts,
} from './cards.js';
import type { BackfillRow, DailyBilled, RetryingPartition, StateRanges, StreamErrors } from './queries.js';
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

/** One stream key of a card: an earthquake stream, or one country x indicator series. */
export interface SeriesView {
  status: StreamStatus;
  state: CardState;
  /** Of its pending and running partitions, those being tried again after a failure. */
  retrying: number;
  freshness: { kind: 'time'; newest: number | null } | { kind: 'year'; lastYear: number | null };
  /** Share of the card's range this key has done; null when the card has no range yet. */
  coveredFraction: number | null;
}

export type CardFreshness =
  | { kind: 'time'; newest: number | null }
  /** The newest and the oldest "last year with a value" among the series, and how many have none. */
  | { kind: 'year'; newest: number | null; oldest: number | null; withoutValue: number };

/** One card: a stream of jobs.yaml (or keys no stream reads), its parts summed. */
export interface CardView {
  id: string;
  origin: CardGroup['origin'];
  title: string;
  operation: string;
  schedule: string | null;
  enabled: boolean | null;
  /** The worst state of its parts. */
  state: CardState;
  series: SeriesView[];
  partitions: PartitionCounts & { retrying: number; total: number };
  totals: Pick<
    StreamStatus,
    'rowsWritten' | 'calls' | 'billedCalls' | 'billedUnknown' | 'units' | 'billedCallsToday' | 'unitsToday'
  >;
  lastSuccessAt: Date | null;
  freshness: CardFreshness;
  timeline: Timeline | null;
  failed: Array<StreamStatus['failedPartitions'][number] & { streamKey: string }>;
  retrying: RetryingPartition[];
  partial: Array<StreamStatus['partialPartitions'][number] & { streamKey: string }>;
  /** The newest failed call: current, resolved (with when), or null when there is none to show. */
  error: CardError | null;
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
  cards: CardView[];
  days: DayBar[];
  budget: BudgetView;
  backfills: BackfillRow[];
}

export interface PageInputs {
  nowMs: number;
  status: StreamStatus[];
  freshness: Map<string, StreamFreshness>;
  errors: Map<string, StreamErrors>;
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

/**
 * Several parts' timelines over one range as one bar: a point is ingested only where every part
 * has it, a state shows wherever any part is in it (the worst on top, see LAYER_ORDER), and the
 * covered fraction is the parts' mean, the share of (part x point) ingested.
 */
export function combineTimelines(parts: readonly Timeline[]): Timeline | null {
  const first = parts[0];
  if (first === undefined) return null;
  if (parts.length === 1) return first;
  const adjacency: Adjacency = first.unit === 'year' ? 1 : 0;
  const notDone = coverageOf(
    first.range,
    parts.flatMap((p) => p.gaps),
    adjacency,
  );
  const layers = LAYER_ORDER.map((state) => {
    if (state === PARTITION_STATE.done) return { state, ranges: notDone.gaps };
    const all = parts.flatMap((p) => p.layers.find((l) => l.state === state)?.ranges ?? []);
    return { state, ranges: mergeRanges(all, adjacency) };
  });
  return {
    unit: first.unit,
    range: first.range,
    layers,
    coveredFraction: parts.reduce((sum, p) => sum + p.coveredFraction, 0) / parts.length,
    gaps: notDone.covered,
  };
}

function extent(ranges: Range[]): Range | null {
  if (ranges.length === 0) return null;
  return { start: Math.min(...ranges.map((r) => r.start)), end: Math.max(...ranges.map((r) => r.end)) };
}

/**
 * One key's ranges per state. "Ingested" is what was proven complete (coverage_proofs), so a window
 * being read again still shows as ingested; queued, running and failed come from the partitions.
 */
function statesOf(
  earthquake: boolean,
  ranges: StateRanges[],
  f: StreamFreshness | undefined,
): Map<PartitionState, Range[]> {
  const byState = new Map(ranges.map((r) => [r.state, earthquake ? r.windows : r.years] as const));
  if (f)
    byState.set(
      PARTITION_STATE.done,
      earthquake ? f.doneWindows.map((w) => ({ start: w.startMs, end: w.endMs })) : f.doneYears,
    );
  return byState;
}

/** From backfill_from (or the first partition of any part) to now; years from jobs.yaml (or the parts' partitions). */
function cardRange(
  earthquake: boolean,
  d: Declared | null,
  parts: Array<Map<PartitionState, Range[]>>,
  nowMs: number,
): Range | null {
  const all = extent(parts.flatMap((p) => [...p.values()].flat()));
  if (earthquake) {
    const from = d?.range.unit === 'time' && d.range.fromMs !== null ? d.range.fromMs : (all?.start ?? null);
    return from === null ? null : { start: from, end: nowMs };
  }
  return d?.range.unit === 'year' ? { start: d.range.from, end: d.range.to } : all;
}

const NO_ERRORS: StreamErrors = { lastError: null, retrying: 0, retryingListed: [] };

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function cardFreshness(earthquake: boolean, series: SeriesView[]): CardFreshness {
  if (earthquake) {
    const times = series.flatMap((s) =>
      s.freshness.kind === 'time' && s.freshness.newest !== null ? [s.freshness.newest] : [],
    );
    return { kind: 'time', newest: times.length === 0 ? null : Math.max(...times) };
  }
  const years = series.flatMap((s) =>
    s.freshness.kind === 'year' && s.freshness.lastYear !== null ? [s.freshness.lastYear] : [],
  );
  return {
    kind: 'year',
    newest: years.length === 0 ? null : Math.max(...years),
    oldest: years.length === 0 ? null : Math.min(...years),
    withoutValue: series.length - years.length,
  };
}

function cardOf(group: CardGroup, i: PageInputs, byKey: Map<string, StreamStatus>): CardView {
  const earthquake = group.operation === 'earthquake';
  const declared = group.stream?.declared ?? null;
  const statuses = group.streamKeys.map((key) => byKey.get(key) ?? emptyStreamStatus(key, group.operation));
  const byState = statuses.map((s) =>
    statesOf(
      earthquake,
      i.ranges.filter((r) => r.streamKey === s.streamKey),
      i.freshness.get(s.streamKey),
    ),
  );
  const range = cardRange(earthquake, declared, byState, i.nowMs);
  const timelines = byState.map((b) => buildTimeline(earthquake ? 'time' : 'year', range, b));
  const errors = statuses.map((s) => i.errors.get(s.streamKey) ?? NO_ERRORS);
  const series = statuses.map((s, k): SeriesView => {
    const f = i.freshness.get(s.streamKey);
    const retrying = errors[k]!.retrying;
    return {
      status: s,
      state: partState(s.partitions, retrying),
      retrying,
      freshness: earthquake
        ? { kind: 'time', newest: f?.newestEventTime?.getTime() ?? null }
        : { kind: 'year', lastYear: f?.lastValueYear ?? null },
      coveredFraction: timelines[k]?.coveredFraction ?? null,
    };
  });
  const state = worstState(series.map((s) => s.state));
  const counts = sumCounts(statuses.map((s) => s.partitions));
  const successes = statuses.flatMap((s) => (s.lastSuccessAt ? [s.lastSuccessAt.getTime()] : []));
  const total = (pick: (s: StreamStatus) => number) => sum(statuses.map(pick));
  return {
    id: group.id,
    origin: group.origin,
    title: group.origin === 'ad-hoc' && earthquake ? (statuses[0]?.name ?? group.title) : group.title,
    operation: group.operation,
    schedule: declared?.schedule ?? null,
    enabled: declared?.enabled ?? null,
    state,
    series,
    partitions: {
      ...counts,
      retrying: sum(series.map((s) => s.retrying)),
      total: counts.done + counts.pending + counts.running + counts.partial + counts.failed,
    },
    totals: {
      rowsWritten: total((s) => s.rowsWritten),
      calls: total((s) => s.calls),
      billedCalls: total((s) => s.billedCalls),
      billedUnknown: total((s) => s.billedUnknown),
      units: total((s) => s.units),
      billedCallsToday: total((s) => s.billedCallsToday),
      unitsToday: total((s) => s.unitsToday),
    },
    lastSuccessAt: successes.length === 0 ? null : new Date(Math.max(...successes)),
    freshness: cardFreshness(earthquake, series),
    timeline: combineTimelines(timelines.filter((t): t is Timeline => t !== null)),
    failed: statuses.flatMap((s) => s.failedPartitions.map((f) => ({ ...f, streamKey: s.streamKey }))),
    retrying: errors.flatMap((e) => e.retryingListed).sort((a, b) => b.since.getTime() - a.since.getTime()),
    partial: statuses.flatMap((s) => s.partialPartitions.map((p) => ({ ...p, streamKey: s.streamKey }))),
    error: cardError(newestError(errors.map((e) => e.lastError)), isFailing(state)),
  };
}

/** One card per stream of jobs.yaml, then the keys no stream of it reads. */
export function buildCards(i: PageInputs): CardView[] {
  const declared = i.file ? declaredStreamList(i.file, currentYearEverywhere(i.nowMs)) : [];
  const byKey = new Map(i.status.map((s) => [s.streamKey, s]));
  return groupCards(declared, i.status).map((g) => cardOf(g, i, byKey));
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
    cards: buildCards(i),
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
