/**
 * `status` per stream: the database's view (partitions, calls, money, failures) joined with what
 * jobs.yaml declares (schedule, backfill range). Pure: the clock and every input are arguments.
 */
import type { ResolvedJobsFile } from '../config/jobs-file.js';
import type { StreamFreshness } from '../db/queries/freshness.js';
import { emptyStreamStatus, type StreamStatus } from '../db/queries/status.js';
import { declaredStreams, type Declared } from '../service/declared-streams.js';
import { currentYearEverywhere, toRfc3339 } from '../domain/time.js';
import { timeCoverage, type Interval } from '../domain/interval.js';
import { coverageOf, type Range } from '../domain/ranges.js';

export type Coverage =
  | {
      unit: 'time';
      from: string;
      to: string;
      /** Whether `to` is the report's clock (a declared stream) rather than the end of what was asked. */
      untilNow: boolean;
      coveredFraction: number;
      gaps: Array<{ from: string; to: string }>;
    }
  | { unit: 'year'; from: number; to: number; coveredFraction: number; gaps: Array<{ from: number; to: number }> };

export interface StreamReport extends StreamStatus {
  /** Declared in jobs.yaml: its schedule text, and whether it is scheduled at all. */
  schedule: string | null;
  enabled: boolean | null;
  freshness: { newestEventTime: Date | null } | { lastValueYear: number | null };
  coverage: Coverage | null;
  /** Earthquake streams: stored events of the stream marked deleted, and revised in the last day. */
  catalogChanges: { deletedEvents: number; revisedLastDay: number } | null;
  /** When each part of the range was last proven complete, oldest part first. */
  provenComplete: Array<{ from: string | number; to: string | number; provenAt: string }>;
}

/** A declared stream: from its backfill_from (else its first proof) up to now. */
function windowCoverage(fromMs: number | null, done: Interval[], nowMs: number): Coverage | null {
  const start = fromMs ?? done[0]?.startMs ?? null;
  if (start === null || start > nowMs) return null;
  const c = timeCoverage({ startMs: start, endMs: nowMs }, done);
  const gaps = c.gaps.map((g) => ({ from: toRfc3339(g.startMs), to: toRfc3339(g.endMs) }));
  const to = toRfc3339(nowMs);
  return { unit: 'time', from: toRfc3339(start), to, untilNow: true, coveredFraction: c.coveredFraction, gaps };
}

/**
 * A stream no jobs file declares: over what its backfills asked for (their windows, merged), so a
 * finished ad-hoc backfill reads 100%; the time between two asked ranges was not asked and is no gap.
 */
function askedCoverage(asked: Interval[], done: Interval[], nowMs: number): Coverage | null {
  if (asked.length === 0) return windowCoverage(null, done, nowMs);
  const parts = asked.map((a) => ({ a, c: timeCoverage(a, done) }));
  const length = (i: Interval) => i.endMs - i.startMs;
  const total = asked.reduce((n, a) => n + length(a), 0);
  const covered = parts.reduce((n, p) => n + p.c.coveredFraction * length(p.a), 0);
  return {
    unit: 'time',
    from: toRfc3339(asked[0]!.startMs),
    to: toRfc3339(asked.at(-1)!.endMs),
    untilNow: false,
    coveredFraction: total === 0 ? 1 : covered / total,
    gaps: parts.flatMap((p) => p.c.gaps.map((g) => ({ from: toRfc3339(g.startMs), to: toRfc3339(g.endMs) }))),
  };
}

function yearCoverage(range: { from: number; to: number } | null, done: Range[]): Coverage | null {
  const r = range ?? (done.length > 0 ? { from: done[0]!.start, to: done.at(-1)!.end } : null);
  if (r === null) return null;
  const c = coverageOf({ start: r.from, end: r.to }, done, 1);
  return {
    unit: 'year',
    from: r.from,
    to: r.to,
    coveredFraction: c.coveredFraction,
    gaps: c.gaps.map((g) => ({ from: g.start, to: g.end })),
  };
}

const NO_FRESHNESS: StreamFreshness = {
  newestEventTime: null,
  lastValueYear: null,
  doneWindows: [],
  doneYears: [],
  askedWindows: [],
  proven: [],
  deletedEvents: 0,
  revisedLastDay: 0,
};

function reportOf(row: StreamStatus, f: StreamFreshness, d: Declared | undefined, nowMs: number): StreamReport {
  const earthquake = row.operation === 'earthquake';
  const coverage = !earthquake
    ? yearCoverage(d?.range.unit === 'year' ? d.range : null, f.doneYears)
    : d?.range.unit === 'time'
      ? windowCoverage(d.range.fromMs, f.doneWindows, nowMs)
      : askedCoverage(f.askedWindows, f.doneWindows, nowMs);
  return {
    ...row,
    name: d?.name ?? row.name,
    schedule: d?.schedule ?? null,
    enabled: d?.enabled ?? null,
    freshness: earthquake ? { newestEventTime: f.newestEventTime } : { lastValueYear: f.lastValueYear },
    coverage,
    catalogChanges: earthquake ? { deletedEvents: f.deletedEvents, revisedLastDay: f.revisedLastDay } : null,
    provenComplete: f.proven.map((p) => ({
      from: earthquake ? toRfc3339(p.lo) : p.lo,
      to: earthquake ? toRfc3339(p.hi) : p.hi,
      provenAt: p.provenAt.toISOString(),
    })),
  };
}

/** Every stream in the database, plus declared ones that never ran (with zero counts). */
export function buildStatusReport(
  rows: StreamStatus[],
  freshness: Map<string, StreamFreshness>,
  file: ResolvedJobsFile | null,
  nowMs: number,
): StreamReport[] {
  const declared = file ? declaredStreams(file, currentYearEverywhere(nowMs)) : new Map<string, Declared>();
  const known = new Set(rows.map((r) => r.streamKey));
  const missing = [...declared.entries()]
    .filter(([key]) => !known.has(key))
    .map(([key, d]) => emptyStreamStatus(key, d.range.unit === 'time' ? 'earthquake' : 'indicator', d.name));
  return [...rows, ...missing].map((r) =>
    reportOf(r, freshness.get(r.streamKey) ?? NO_FRESHNESS, declared.get(r.streamKey), nowMs),
  );
}
