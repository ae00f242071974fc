import cronParser from 'cron-parser';
import { describe, expect, it } from 'vitest';
import {
  eventsPerDay,
  parseJobsFile,
  projectEarthquakeStream,
  projectIndicatorStream,
  projectionTotal,
  runsPerDay,
  type EarthquakeStreamConfig,
  type IndicatorStreamConfig,
} from '../../src/config/jobs-file.js';
import { cronRunsBetween } from '../../src/config/jobs-file/projection.js';

/** check-config's projection of billed calls per day (docs/jobs-yaml.md, "Projected billed calls"). */

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** A Saturday: the weekly Sunday 03:00 tier runs within the next 24 h. */
const SATURDAY_NOON = Date.parse('2026-06-13T12:00:00Z');
const MONDAY_NOON = Date.parse('2026-06-15T12:00:00Z');

function streams(yaml: string) {
  return parseJobsFile(yaml, 'jobs.yaml', () => new Date(MONDAY_NOON));
}

/** The stream of jobs.yaml: three tiers. */
const GLOBAL: EarthquakeStreamConfig = streams(
  [
    'earthquakes:',
    '  - name: global-m2_5',
    '    min_magnitude: 2.5',
    '    refresh:',
    '      - { within: 2h, every: 10m }',
    '      - { within: 3d, every: 6h }',
    '      - { within: 60d, schedule: "0 3 * * 0" }',
    '',
  ].join('\n'),
).earthquakes[0]!;

const MACRO: IndicatorStreamConfig = {
  name: 'macro',
  indicators: ['NY.GDP.MKTP.CD', 'SP.POP.TOTL'],
  countries: ['US', 'CHN', 'WLD', 'DEU', 'IND'],
  fromYear: 1960,
  toYear: null,
  schedule: { kind: 'every', everyMs: DAY },
  enabled: true,
};

/** Counting run by run, as the schedulers' cron-parser steps: the reference for `cronRunsBetween`. */
function stepped(pattern: string, tz: string, fromMs: number, toMs: number): number {
  const runs = cronParser.parseExpression(pattern, { tz, currentDate: new Date(fromMs), endDate: new Date(toMs) });
  let count = 0;
  while (runs.hasNext()) {
    runs.next();
    count += 1;
  }
  return count;
}

describe('runsPerDay', () => {
  it('every: the day divided by the interval, fractions kept', () => {
    expect(runsPerDay({ kind: 'every', everyMs: 10 * 60_000 }, MONDAY_NOON)).toBe(144);
    expect(runsPerDay({ kind: 'every', everyMs: 30_000 }, MONDAY_NOON)).toBe(2_880);
    expect(runsPerDay({ kind: 'every', everyMs: 7 * DAY }, MONDAY_NOON)).toBeCloseTo(1 / 7, 12);
  });

  it('cron: the runs of the next 28 days a day, in the pattern time zone (UTC when none)', () => {
    const cron = (pattern: string, timezone: string | null = null) => ({ kind: 'cron' as const, pattern, timezone });
    expect(runsPerDay(cron('*/10 * * * *'), MONDAY_NOON)).toBe(144);
    // Weekly: the same whatever the day it is asked.
    expect(runsPerDay(cron('0 3 * * 0'), SATURDAY_NOON)).toBeCloseTo(1 / 7, 12);
    expect(runsPerDay(cron('0 3 * * 0'), MONDAY_NOON)).toBeCloseTo(1 / 7, 12);
    // Hourly 09:00-17:00 Berlin on weekdays: 20 weekdays of 9 runs in 28 days.
    expect(runsPerDay(cron('0 9-17 * * 1-5', 'Europe/Berlin'), Date.parse('2026-06-19T12:00:00Z'))).toBeCloseTo(
      180 / 28,
      12,
    );
    // A run exactly 28 days ahead is in; one exactly now is not (it is the run being made).
    expect(runsPerDay(cron('0 12 * * *'), MONDAY_NOON)).toBe(1);
  });

  it.each([
    ['*/10 * * * *', 'UTC', '2026-06-15T12:03:17.250Z'],
    ['*/30 9-17 * * 1-5', 'Europe/Berlin', '2026-06-19T10:00:00Z'],
    ['0 * * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z'], // daylight saving starts
    ['0 * * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z'], // and ends
    ['30 0 */6 * * *', 'Asia/Tokyo', '2026-06-15T12:00:00Z'],
    ['0 0 L * *', 'UTC', '2026-06-29T12:00:00Z'],
    ['15 10 * * 5#3', 'UTC', '2026-06-18T12:00:00Z'],
    ['*/20 */7 * * * *', 'Asia/Kolkata', '2026-06-15T12:34:56.789Z'], // seconds, and a half-hour offset
  ])('cron %s in %s from %s: counted hour by hour as cron-parser steps it', (pattern, tz, from) => {
    const fromMs = Date.parse(from);
    expect(cronRunsBetween(pattern, tz, fromMs, fromMs + DAY)).toBe(stepped(pattern, tz, fromMs, fromMs + DAY));
  });

  it('cron: a per-second pattern is counted without stepping 86,400 runs', () => {
    // Stepped run by run, 28 days of a per-second pattern would outlast the test timeout by far.
    expect(runsPerDay({ kind: 'cron', pattern: '* * * * * *', timezone: null }, MONDAY_NOON)).toBe(86_400);
  });
});

describe('projectEarthquakeStream', () => {
  it('per tier: runs × the sum over its 31-day windows of max(1, ceil(expected events / 200))', () => {
    const p = projectEarthquakeStream(GLOBAL, 80, SATURDAY_NOON);
    expect(p.tiers.map((t) => [t.runsPerDay, t.windowsPerRun, t.callsPerRun, t.callsPerDay])).toEqual([
      // 0-2h: 80 × 2/24 = 6.7 events, one call
      [144, 1, 1, 144],
      // 2h-3d (70 h): 233.3 events, two calls
      [4, 1, 2, 8],
      // 3d-60d (57 days), weekly: windows of 31 days less 2 s (2,480 events: 13 calls) and the rest (2,080: 11 calls)
      [4 / 28, 2, 24, (4 / 28) * 24],
    ]);
    expect(p.tiers[0]!.eventsPerRun).toBeCloseTo((80 * 2) / 24, 9);
    expect(p.tiers[2]!.eventsPerRun).toBeCloseTo(80 * 57, 9);
    expect(p.callsPerDay).toBeCloseTo(152 + 24 / 7, 9);
    expect(p.minCallsPerDay).toBeCloseTo(144 + 4 + 2 / 7, 9);
    expect(p).toMatchObject({ kind: 'earthquake', name: 'global-m2_5', enabled: true, eventsPerDay: 80 });
  });

  it('the bands are the tiers: from the previous within (0 for the first) to their own', () => {
    const p = projectEarthquakeStream(GLOBAL, 80, SATURDAY_NOON);
    expect(p.tiers.map((t) => [t.tier.fromMs, t.tier.withinMs])).toEqual([
      [0, 2 * HOUR],
      [2 * HOUR, 3 * DAY],
      [3 * DAY, 60 * DAY],
    ]);
  });

  it('a window holding no event still costs a call', () => {
    const p = projectEarthquakeStream(GLOBAL, 0, SATURDAY_NOON);
    expect(p.tiers.map((t) => t.callsPerRun)).toEqual([1, 1, 2]);
    expect(p.callsPerDay).toBe(p.minCallsPerDay);
  });

  it('without a density: runs and windows only, and the floor of one call per window', () => {
    const p = projectEarthquakeStream(GLOBAL, null, MONDAY_NOON);
    expect(p.tiers.map((t) => [t.runsPerDay, t.windowsPerRun, t.eventsPerRun, t.callsPerRun, t.callsPerDay])).toEqual([
      [144, 1, null, null, null],
      [4, 1, null, null, null],
      [4 / 28, 2, null, null, null],
    ]);
    expect(p.callsPerDay).toBeNull();
    expect(p.minCallsPerDay).toBeCloseTo(148 + 2 / 7, 9);
  });

  it('a stream without refresh is one tier: its schedule over its lookback', () => {
    const quick = streams('earthquakes:\n  - name: quick\n    every: 30s\n    lookback: 40d\n').earthquakes[0]!;
    const p = projectEarthquakeStream(quick, 1_000, MONDAY_NOON);
    // 40 days: 31 days less 2 s (30,999.98 events: 155 calls) and 9 days and 2 s (9,000.02: 46 calls).
    expect(p.tiers.map((t) => [t.runsPerDay, t.windowsPerRun, t.callsPerRun])).toEqual([[2_880, 2, 201]]);
    expect(p.callsPerDay).toBe(2_880 * 201);
  });
});

describe('projectIndicatorStream', () => {
  it('runs × indicators × countries × 70-year chunks of the year range', () => {
    expect(projectIndicatorStream(MACRO, MONDAY_NOON)).toEqual({
      kind: 'indicator',
      name: 'macro',
      enabled: true,
      schedule: MACRO.schedule,
      runsPerDay: 1,
      series: 10,
      years: { fromYear: 1960, toYear: 2026 },
      chunksPerSeries: 1,
      callsPerRun: 10,
      callsPerDay: 10,
    });
  });

  it("without years: the gateway's default range, the latest 10", () => {
    const p = projectIndicatorStream(
      { ...MACRO, fromYear: null, schedule: { kind: 'every', everyMs: 6 * HOUR } },
      MONDAY_NOON,
    );
    expect(p.years).toEqual({ fromYear: 2017, toYear: 2026 });
    expect(p.callsPerDay).toBe(40);
  });
});

describe('eventsPerDay and the total', () => {
  it('eventsPerDay: events over the days sampled; unknown without a matching event', () => {
    expect(eventsPerDay({ events: 300, days: 30 })).toBe(10);
    expect(eventsPerDay({ events: 3, days: 1 })).toBe(3);
    expect(eventsPerDay({ events: 0, days: 1 })).toBeNull();
    expect(eventsPerDay(null)).toBeNull();
  });

  it('sums enabled streams; an unknown density counts at its floor and is reported', () => {
    const known = projectEarthquakeStream(GLOBAL, 80, SATURDAY_NOON); // 152 + 24/7
    const unknown = projectEarthquakeStream(GLOBAL, null, SATURDAY_NOON); // at least 148 + 2/7
    const disabled = projectEarthquakeStream({ ...GLOBAL, enabled: false }, 80, SATURDAY_NOON);
    const macro = projectIndicatorStream(MACRO, SATURDAY_NOON); // 10
    const total = (ps: Parameters<typeof projectionTotal>[0]) => projectionTotal(ps);
    expect(total([known, macro, disabled]).callsPerDay).toBeCloseTo(162 + 24 / 7, 9);
    expect(total([known, macro, disabled]).unknownStreams).toBe(0);
    expect(total([known, unknown, macro]).callsPerDay).toBeCloseTo(310 + 26 / 7, 9);
    expect(total([known, unknown, macro]).unknownStreams).toBe(1);
    expect(projectionTotal([])).toEqual({ callsPerDay: 0, unknownStreams: 0 });
  });
});
