/**
 * What jobs.yaml declares for each stream key, as `status`, the status page and backfill control
 * read it: its name, schedule text, whether it is scheduled, and its range. Pure.
 */
import { formatDurationMs } from '../config/durations.js';
import type { EarthquakeStreamConfig, ResolvedJobsFile, Schedule } from '../config/jobs-file.js';
import { earthquakeStream, indicatorStream } from '../domain/streams.js';
import { resolveYearRange } from '../planning/chunks.js';

export interface Declared {
  name: string;
  schedule: string;
  enabled: boolean;
  /** Earthquake: backfill_from (ms). Indicator: the year range. */
  range: { unit: 'time'; fromMs: number | null } | { unit: 'year'; from: number; to: number };
}

export function formatSchedule(schedule: Schedule): string {
  if (schedule.kind === 'every') return `every ${formatDurationMs(schedule.everyMs)}`;
  return `cron "${schedule.pattern}" ${schedule.timezone ?? 'UTC'}`;
}

/** One tier reads as a plain schedule; several name each tier and how far back it re-reads. */
export function formatRefresh(s: EarthquakeStreamConfig): string {
  if (s.refresh.length <= 1) return formatSchedule(s.schedule);
  return s.refresh.map((t) => `${formatSchedule(t.schedule)} (to ${formatDurationMs(t.withinMs)})`).join(', ');
}

/**
 * One stream of jobs.yaml and the stream keys it reads: one for an earthquake stream, every
 * country x indicator for an indicator stream.
 */
export interface DeclaredStream {
  name: string;
  operation: 'earthquake' | 'indicator';
  streamKeys: string[];
  declared: Declared;
}

/** The streams of jobs.yaml in file order, earthquakes first. */
export function declaredStreamList(file: ResolvedJobsFile, currentYear: number): DeclaredStream[] {
  const quakes = file.earthquakes.map((s): DeclaredStream => {
    const range = { unit: 'time' as const, fromMs: s.backfillFrom?.getTime() ?? null };
    return {
      name: s.name,
      operation: 'earthquake',
      streamKeys: [earthquakeStream({ minMagnitude: s.minMagnitude, circle: s.circle }).streamKey],
      declared: { name: s.name, schedule: formatRefresh(s), enabled: s.enabled, range },
    };
  });
  const indicators = file.indicators.map((s): DeclaredStream => {
    const years = resolveYearRange({ fromYear: s.fromYear ?? undefined, toYear: s.toYear ?? undefined, currentYear });
    const keys = s.indicators.flatMap((indicator) =>
      s.countries.map((country) => indicatorStream({ indicator, country }).streamKey),
    );
    return {
      name: s.name,
      operation: 'indicator',
      streamKeys: [...new Set(keys)],
      declared: {
        name: s.name,
        schedule: formatSchedule(s.schedule),
        enabled: s.enabled,
        range: { unit: 'year', from: years.fromYear, to: years.toYear },
      },
    };
  });
  return [...quakes, ...indicators];
}

/** Stream key -> what jobs.yaml says about it; the first declaration wins a shared key. */
export function declaredStreams(file: ResolvedJobsFile, currentYear: number): Map<string, Declared> {
  const out = new Map<string, Declared>();
  for (const s of declaredStreamList(file, currentYear))
    for (const key of s.streamKeys) if (!out.has(key)) out.set(key, s.declared);
  return out;
}
