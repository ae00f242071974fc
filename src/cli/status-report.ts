/**
 * `status` per stream: the database's view (partitions, calls, money, failures) joined with what
 * jobs.yaml declares (schedule, backfill range). Pure: the clock and every input are arguments.
 */
import type { ResolvedJobsFile } from '../config/jobs-file.js';
import type { StreamFreshness } from '../db/queries/freshness.js';
import type { StreamStatus } from '../db/queries/status.js';
import { earthquakeStream, indicatorStream } from '../domain/streams.js';
import { toRfc3339 } from '../gateway/time.js';
import { resolveYearRange } from '../planning/chunks.js';
import { coverageOf, type Interval } from '../planning/intervals.js';
import { formatSchedule } from './commands/check-config.js';

export type Coverage =
  | { unit: 'time'; from: string; to: string; coveredFraction: number; gaps: Array<{ from: string; to: string }> }
  | { unit: 'year'; from: number; to: number; coveredFraction: number; gaps: Array<{ from: number; to: number }> };

export interface StreamReport extends StreamStatus {
  /** Declared in jobs.yaml: its schedule text, and whether it is scheduled at all. */
  schedule: string | null;
  enabled: boolean | null;
  freshness: { newestEventTime: Date | null } | { lastValueYear: number | null };
  coverage: Coverage | null;
}

interface Declared {
  name: string;
  schedule: string;
  enabled: boolean;
  /** Earthquake: backfill_from (ms). Indicator: the year range. */
  range: { unit: 'time'; fromMs: number | null } | { unit: 'year'; from: number; to: number };
}

/** Stream key -> what jobs.yaml says about it; the first declaration wins a shared key. */
export function declaredStreams(file: ResolvedJobsFile, currentYear: number): Map<string, Declared> {
  const out = new Map<string, Declared>();
  for (const s of file.earthquakes) {
    const key = earthquakeStream({ minMagnitude: s.minMagnitude, circle: s.circle }).streamKey;
    const range = { unit: 'time' as const, fromMs: s.backfillFrom?.getTime() ?? null };
    if (!out.has(key)) out.set(key, { name: s.name, schedule: formatSchedule(s.schedule), enabled: s.enabled, range });
  }
  for (const s of file.indicators) {
    const years = resolveYearRange({ fromYear: s.fromYear ?? undefined, toYear: s.toYear ?? undefined, currentYear });
    const range = { unit: 'year' as const, from: years.fromYear, to: years.toYear };
    for (const indicator of s.indicators) {
      for (const country of s.countries) {
        const key = indicatorStream({ indicator, country }).streamKey;
        if (!out.has(key)) out.set(key, { name: s.name, schedule: formatSchedule(s.schedule), enabled: s.enabled, range });
      }
    }
  }
  return out;
}

function timeCoverage(fromMs: number | null, done: Interval[], nowMs: number): Coverage | null {
  const start = fromMs ?? done[0]?.start ?? null;
  if (start === null || start > nowMs) return null;
  const c = coverageOf({ start, end: nowMs }, done, 0);
  const gaps = c.gaps.map((g) => ({ from: toRfc3339(g.start), to: toRfc3339(g.end) }));
  return { unit: 'time', from: toRfc3339(start), to: toRfc3339(nowMs), coveredFraction: c.coveredFraction, gaps };
}

function yearCoverage(range: { from: number; to: number } | null, done: Interval[]): Coverage | null {
  const r = range ?? (done.length > 0 ? { from: done[0]!.start, to: done.at(-1)!.end } : null);
  if (r === null) return null;
  const c = coverageOf({ start: r.from, end: r.to }, done, 1);
  return { unit: 'year', from: r.from, to: r.to, coveredFraction: c.coveredFraction, gaps: c.gaps.map((g) => ({ from: g.start, to: g.end })) };
}

const NO_FRESHNESS: StreamFreshness = { newestEventTime: null, lastValueYear: null, doneWindows: [], doneYears: [] };

function emptyStatus(streamKey: string, operation: string, name: string): StreamStatus {
  return {
    streamKey,
    operation,
    name,
    params: null,
    partitions: { done: 0, pending: 0, running: 0, failed: 0 },
    rowsWritten: 0,
    calls: 0,
    billedCalls: 0,
    units: 0,
    billedCallsToday: 0,
    unitsToday: 0,
    lastSuccessAt: null,
    lastError: null,
    lastErrorKind: null,
    failedPartitions: [],
  };
}

function reportOf(row: StreamStatus, f: StreamFreshness, d: Declared | undefined, nowMs: number): StreamReport {
  const earthquake = row.operation === 'earthquake';
  const coverage = earthquake
    ? timeCoverage(d?.range.unit === 'time' ? d.range.fromMs : null, f.doneWindows, nowMs)
    : yearCoverage(d?.range.unit === 'year' ? d.range : null, f.doneYears);
  return {
    ...row,
    name: d?.name ?? row.name,
    schedule: d?.schedule ?? null,
    enabled: d?.enabled ?? null,
    freshness: earthquake ? { newestEventTime: f.newestEventTime } : { lastValueYear: f.lastValueYear },
    coverage,
  };
}

/** Every stream in the database, plus declared ones that never ran (with zero counts). */
export function buildStatusReport(rows: StreamStatus[], freshness: Map<string, StreamFreshness>, file: ResolvedJobsFile | null, nowMs: number): StreamReport[] {
  const declared = file ? declaredStreams(file, new Date(nowMs).getUTCFullYear()) : new Map<string, Declared>();
  const known = new Set(rows.map((r) => r.streamKey));
  const missing = [...declared.entries()]
    .filter(([key]) => !known.has(key))
    .map(([key, d]) => emptyStatus(key, d.range.unit === 'time' ? 'earthquake' : 'indicator', d.name));
  return [...rows, ...missing].map((r) => reportOf(r, freshness.get(r.streamKey) ?? NO_FRESHNESS, declared.get(r.streamKey), nowMs));
}
