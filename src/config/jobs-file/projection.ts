/**
 * What a declared stream will cost the gateway account: its projected billed calls per day. Pure:
 * the clock and the density of the events already stored are arguments (`check-config` reads the
 * density from PostgreSQL when it can).
 *
 * The projection is the ideal a run can reach: a window of n events costs max(1, ceil(n / 200))
 * billed calls when every answer is full. A gateway that truncates in an unknown order costs more
 * (docs/design.md, "Cost"), so this is a floor for planning a budget, not a bound on the bill.
 */
import cronParser, { type CronExpression } from 'cron-parser';
import { currentYearEverywhere, DAY_MS } from '../../domain/time.js';
import { planChunks, resolveYearRange, type YearRange } from '../../planning/chunks.js';
import { idealCalls } from '../../planning/estimate.js';
import { planWindows } from '../../planning/windows.js';
import type { RefreshTier } from './refresh.js';
import type { Schedule } from './schedule.js';
import type { EarthquakeStreamConfig, IndicatorStreamConfig } from './streams.js';

/** Matching events stored over a sample of whole days, as `db/queries/stream-density.ts` counts them. */
export interface DensitySample {
  events: number;
  days: number;
}

/** Events a day, or null when nothing is stored for the stream (the density is then unknown). */
export function eventsPerDay(sample: DensitySample | null): number | null {
  if (sample === null || sample.events === 0 || sample.days <= 0) return null;
  return sample.events / sample.days;
}

/** Cron runs are averaged over this many days: weekly patterns and most monthly ones come out right. */
export const CRON_AVERAGE_DAYS = 28;

/**
 * Runs a day: `every` divides the day; a cron pattern is counted over the CRON_AVERAGE_DAYS
 * after `nowMs` and averaged, because its runs need not be spread evenly (`0 9-17 * * 1-5`, weekly).
 */
export function runsPerDay(schedule: Schedule, nowMs: number): number {
  if (schedule.kind === 'every') return DAY_MS / schedule.everyMs;
  // jobs.yaml reads cron in UTC unless told otherwise, as the schedulers do.
  return (
    cronRunsBetween(schedule.pattern, schedule.timezone ?? 'UTC', nowMs, nowMs + CRON_AVERAGE_DAYS * DAY_MS) /
    CRON_AVERAGE_DAYS
  );
}

const HOUR_MS = 3_600_000;

/**
 * Runs of a cron pattern in (fromMs, toMs]. cron-parser takes milliseconds per run it steps to, so a
 * per-minute pattern stepped run by run would take seconds. Instead the parts where time zones,
 * daylight saving and month lengths matter (hour, day of month, month, weekday) are stepped hour by
 * hour, still by cron-parser, and the runs inside each matching hour are its minutes × its seconds.
 */
export function cronRunsBetween(pattern: string, timezone: string, fromMs: number, toMs: number): number {
  const parts = pattern.trim().split(/\s+/);
  const dayParts = parts.slice(parts.length === 6 ? 2 : 1).join(' ');
  const { minute, second } = cronParser.parseExpression(pattern, { tz: timezone }).fields;
  const offsetsMs = minute.flatMap((m) => second.map((s) => m * 60_000 + s * 1_000));
  const hours = cronParser.parseExpression(`0 0 ${dayParts}`, {
    tz: timezone,
    // The hour holding fromMs starts before it; next() returns times strictly after currentDate.
    currentDate: new Date(fromMs - HOUR_MS),
    endDate: new Date(toMs),
  });
  let runs = 0;
  // next() throws past endDate; hasNext() would compute every step twice, and a step costs milliseconds.
  for (let hourMs = nextOrNull(hours); hourMs !== null; hourMs = nextOrNull(hours)) {
    if (hourMs > fromMs && hourMs + HOUR_MS <= toMs) runs += offsetsMs.length;
    else runs += offsetsMs.filter((o) => hourMs + o > fromMs && hourMs + o <= toMs).length;
  }
  return runs;
}

function nextOrNull(hours: CronExpression): number | null {
  try {
    return hours.next().getTime();
  } catch {
    return null;
  }
}

export interface TierProjection {
  tier: RefreshTier;
  runsPerDay: number;
  /** The 31-day windows one run of the tier reads: its band [now - withinMs, now - fromMs]. */
  windowsPerRun: number;
  /** Null when the density is unknown. */
  eventsPerRun: number | null;
  /** Sum over the windows of max(1, ceil(expected events / 200)); null when the density is unknown. */
  callsPerRun: number | null;
  callsPerDay: number | null;
}

export interface EarthquakeProjection {
  kind: 'earthquake';
  name: string;
  enabled: boolean;
  /** Stored events a day that match the stream's filters; null when unknown. */
  eventsPerDay: number | null;
  tiers: TierProjection[];
  /** Null when the density is unknown. */
  callsPerDay: number | null;
  /** One billed call per window at least, whatever the density: known even without stored events. */
  minCallsPerDay: number;
}

export interface IndicatorProjection {
  kind: 'indicator';
  name: string;
  enabled: boolean;
  schedule: Schedule;
  runsPerDay: number;
  /** Indicators × countries. */
  series: number;
  years: YearRange;
  /** Requests of at most 70 years each series takes. */
  chunksPerSeries: number;
  callsPerRun: number;
  callsPerDay: number;
}

export type StreamProjection = EarthquakeProjection | IndicatorProjection;

function projectTier(tier: RefreshTier, perDay: number | null, nowMs: number): TierProjection {
  // The same windows a tick plans, so the projection counts what a run would request.
  const windows = planWindows({ fromMs: nowMs - tier.withinMs, toMs: nowMs - tier.fromMs });
  const runs = runsPerDay(tier.schedule, nowMs);
  if (perDay === null) {
    return {
      tier,
      runsPerDay: runs,
      windowsPerRun: windows.length,
      eventsPerRun: null,
      callsPerRun: null,
      callsPerDay: null,
    };
  }
  const expected = windows.map((w) => (perDay * (w.endMs - w.startMs)) / DAY_MS);
  const calls = expected.reduce((sum, n) => sum + idealCalls(n), 0);
  return {
    tier,
    runsPerDay: runs,
    windowsPerRun: windows.length,
    eventsPerRun: expected.reduce((sum, n) => sum + n, 0),
    callsPerRun: calls,
    callsPerDay: runs * calls,
  };
}

/** `perDay`: stored events a day matching the stream (see `eventsPerDay`), null when unknown. */
export function projectEarthquakeStream(
  s: EarthquakeStreamConfig,
  perDay: number | null,
  nowMs: number,
): EarthquakeProjection {
  const tiers = s.refresh.map((tier) => projectTier(tier, perDay, nowMs));
  return {
    kind: 'earthquake',
    name: s.name,
    enabled: s.enabled,
    eventsPerDay: perDay,
    tiers,
    callsPerDay: perDay === null ? null : tiers.reduce((sum, t) => sum + (t.callsPerDay ?? 0), 0),
    minCallsPerDay: tiers.reduce((sum, t) => sum + t.runsPerDay * t.windowsPerRun, 0),
  };
}

/** A run re-reads every series over the stream's years (as the tick does), one call per 70-year chunk. */
export function projectIndicatorStream(s: IndicatorStreamConfig, nowMs: number): IndicatorProjection {
  const currentYear = currentYearEverywhere(nowMs);
  const years = resolveYearRange({ fromYear: s.fromYear ?? undefined, toYear: s.toYear ?? undefined, currentYear });
  const chunksPerSeries = planChunks(years).length;
  const series = s.indicators.length * s.countries.length;
  const runs = runsPerDay(s.schedule, nowMs);
  return {
    kind: 'indicator',
    name: s.name,
    enabled: s.enabled,
    schedule: s.schedule,
    runsPerDay: runs,
    series,
    years,
    chunksPerSeries,
    callsPerRun: series * chunksPerSeries,
    callsPerDay: runs * series * chunksPerSeries,
  };
}

export interface ProjectionTotal {
  /** Enabled streams only: a disabled stream is not scheduled. */
  callsPerDay: number;
  /** Enabled earthquake streams whose density is unknown: `callsPerDay` counts their floor. */
  unknownStreams: number;
}

export function projectionTotal(projections: readonly StreamProjection[]): ProjectionTotal {
  let callsPerDay = 0;
  let unknownStreams = 0;
  for (const p of projections) {
    if (!p.enabled) continue;
    if (p.kind === 'indicator') callsPerDay += p.callsPerDay;
    else if (p.callsPerDay !== null) callsPerDay += p.callsPerDay;
    else {
      callsPerDay += p.minCallsPerDay;
      unknownStreams += 1;
    }
  }
  return { callsPerDay, unknownStreams };
}
