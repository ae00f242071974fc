import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/cli/commands/backfill.js';
import { billedCallsToConfirm, parseSampleFlag, planJson, planLines } from '../../src/cli/actions/plan.js';
import { planCommand } from '../../src/cli/commands/plan.js';
import type { Plan } from '../../src/ingest/plan.js';
import { SampleSchedule, nextLengthMs, sampleInterval, sampleWindows } from '../../src/planning/samples.js';
import {
  boundInWindow,
  countedInWindow,
  isWiderOrEqual,
  piecesOf,
  isMeasured,
  MAX_EVENTS_PER_DAY,
  ratePool,
  unionOf,
  windowEvents,
} from '../../src/planning/density.js';
import {
  DEFAULT_ORDER_FACTOR,
  idealCalls,
  indicatorEstimate,
  median,
  orderFactor,
  rounded,
  unitsFactor,
  wallSeconds,
  windowCalls,
  windowUnits,
} from '../../src/planning/estimate.js';
import { UsageError } from '../../src/errors.js';

const DAY = 86_400_000;
const all = { minMagnitude: null, circle: null };

describe('wider streams', () => {
  it('the unfiltered stream is wider than every other; a stream is as wide as itself', () => {
    const filters = fc.record({
      minMagnitude: fc.option(fc.double({ min: -1, max: 10, noNaN: true }), { nil: null }),
      circle: fc.option(
        fc.record({
          latitude: fc.double({ min: -90, max: 90, noNaN: true }),
          longitude: fc.double({ min: -180, max: 180, noNaN: true }),
          radiusKm: fc.double({ min: 1, max: 20_000, noNaN: true }),
        }),
        { nil: null },
      ),
    });
    fc.assert(fc.property(filters, (f) => isWiderOrEqual(all, f) && isWiderOrEqual(f, f)));
  });

  it('a lower minimum magnitude and a containing circle are wider; not the other way round', () => {
    expect(isWiderOrEqual({ minMagnitude: 2, circle: null }, { minMagnitude: 2.5, circle: null })).toBe(true);
    expect(isWiderOrEqual({ minMagnitude: 2.5, circle: null }, { minMagnitude: 2, circle: null })).toBe(false);
    expect(isWiderOrEqual({ minMagnitude: 2, circle: null }, all)).toBe(false);
    const big = { latitude: 36.7, longitude: -119.4, radiusKm: 400 };
    const inside = { latitude: 36.7, longitude: -119.0, radiusKm: 100 };
    const across = { latitude: 40, longitude: -119.4, radiusKm: 100 };
    expect(isWiderOrEqual({ minMagnitude: null, circle: big }, { minMagnitude: 1, circle: inside })).toBe(true);
    expect(isWiderOrEqual({ minMagnitude: null, circle: big }, { minMagnitude: null, circle: across })).toBe(false);
    expect(isWiderOrEqual({ minMagnitude: null, circle: big }, all)).toBe(false);
    expect(isWiderOrEqual({ minMagnitude: null, circle: inside }, { minMagnitude: null, circle: big })).toBe(false);
  });
});

describe('event density of a window', () => {
  const window = { startMs: 0, endMs: 30 * DAY };

  it('counts a fully covered window exactly, and a sample inside stored coverage never twice', () => {
    const parts = unionOf([
      { startMs: 0, endMs: 10 * DAY },
      { startMs: 5 * DAY, endMs: 30 * DAY },
    ]);
    expect(parts).toEqual([{ startMs: 0, endMs: 30 * DAY }]);
    const c = countedInWindow(window, parts, 900, [
      { interval: { startMs: DAY, endMs: 2 * DAY }, events: 50, full: false },
    ]);
    expect(c).toEqual({ ms: 30 * DAY, events: 900 });
    expect(windowEvents(window, c, null)).toEqual({ kind: 'exact', events: { low: 900, expected: 900, high: 900 } });
  });

  it('adds complete samples outside the stored parts, but not full ones or overlapping ones', () => {
    const samples = [
      { interval: { startMs: 20 * DAY, endMs: 21 * DAY }, events: 30, full: false },
      { interval: { startMs: 20.5 * DAY, endMs: 22 * DAY }, events: 40, full: false },
      { interval: { startMs: 25 * DAY, endMs: 26 * DAY }, events: 200, full: true },
    ];
    expect(countedInWindow(window, [{ startMs: 0, endMs: 10 * DAY }], 100, samples)).toEqual({
      ms: 11 * DAY,
      events: 130,
    });
  });

  it('knows nothing of a window with no coverage when nothing else is stored', () => {
    expect(windowEvents(window, { ms: 0, events: 0 }, null)).toEqual({ kind: 'unknown', events: null });
    expect(ratePool([])).toBeNull();
  });

  it('extrapolates from the pool: expected is the pooled rate; nothing counted may be empty or as dense as the catalog gets', () => {
    const pool = ratePool([
      { ms: DAY, events: 10 },
      { ms: DAY, events: 30 },
      { ms: 1000, events: 500 },
    ])!;
    expect(pool).toMatchObject({ low: 10 / DAY, expected: 20 / DAY, high: 30 / DAY, lowerBoundOnly: false });
    const e = windowEvents(window, { ms: 0, events: 0 }, pool);
    expect(e.kind).toBe('extrapolated');
    expect(e.events!.expected).toBeCloseTo(600);
    expect(e.events!.low).toBe(0);
    expect(e.events!.high).toBeCloseTo(30 * MAX_EVENTS_PER_DAY);
  });

  it('a full sample inside a window is a lower bound: the low end, never the high one', () => {
    const bound = { ms: DAY, events: 200, atLeast: true };
    const e = windowEvents(window, { ms: 0, events: 0 }, null, bound);
    expect(e.kind).toBe('bounded');
    expect(e.events!.low).toBe(200);
    expect(e.events!.expected).toBeCloseTo(30 * 200);
    expect(e.events!.high).toBeCloseTo(30 * MAX_EVENTS_PER_DAY);
    expect(isMeasured(e.kind)).toBe(false);
  });

  it('full samples count beside the counted ones: the dense stretches are not priced at the sparse rate', () => {
    const at = (day: number, days: number, events: number) => ({
      interval: { startMs: window.startMs + day * DAY, endMs: window.startMs + (day + days) * DAY },
      events,
      full: events >= 200,
    });
    // Below the cap where the catalog is quiet; full where it is dense (one inside another: the smaller).
    const samples = [at(0, 2, 20), at(10, 4, 200), at(11, 1, 200), at(20, 1, 200), at(20.5, 2, 200)];
    const counted = countedInWindow(window, [], 0, samples);
    const bound = boundInWindow(window, samples)!;
    expect(bound).toEqual({ ms: 2 * DAY, events: 400, atLeast: true });
    const e = windowEvents(window, counted, null, bound);
    expect(e.kind).toBe('scaled');
    expect(e.events!.low).toBe(420);
    expect(e.events!.expected).toBeCloseTo(420 + 26 * (420 / 4));
  });

  it('with only full samples, the largest lower bound is the expectation', () => {
    const pool = ratePool([
      { ms: 2 * DAY, events: 200, atLeast: true },
      { ms: DAY, events: 200, atLeast: true },
    ])!;
    expect(pool.lowerBoundOnly).toBe(true);
    expect(pool.expected).toBe(200 / DAY);
    expect(pool.high).toBeGreaterThan(pool.expected);
  });

  it('always gives low <= expected <= high', () => {
    const piece = fc.record({
      ms: fc.integer({ min: 3_600_000, max: 31 * DAY }),
      events: fc.nat(20_000),
      atLeast: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 30 * DAY }),
        fc.nat(5_000),
        (pieces, coveredMs, events) => {
          const pool = ratePool(pieces);
          const e = windowEvents(window, { ms: coveredMs, events }, pool).events;
          if (e === null) return true;
          return e.low <= e.expected + 1e-6 && e.expected <= e.high + 1e-6 && e.low >= 0;
        },
      ),
    );
  });

  it('splits coverage into pieces of at most a window', () => {
    expect(piecesOf([{ startMs: 0, endMs: 70 * DAY }], 31 * DAY).map((p) => (p.endMs - p.startMs) / DAY)).toEqual([
      31, 31, 8,
    ]);
  });
});

describe('billed calls, units and time', () => {
  it('the ideal is one call per 200 events, at least one', () => {
    expect([0, 1, 199, 200, 201, 400, 401].map(idealCalls)).toEqual([1, 1, 1, 1, 2, 2, 3]);
  });

  it('a window under the cap costs exactly one call, a full one its ideal times the order factor', () => {
    expect(windowCalls({ low: 150, expected: 150, high: 150 }, DEFAULT_ORDER_FACTOR)).toEqual({
      low: 1,
      expected: 1,
      high: 1,
    });
    const c = windowCalls({ low: 1000, expected: 1000, high: 1000 }, { expected: 1.1, high: 2, measuredWindows: 5 });
    expect(c.low).toBe(5);
    expect(c.expected).toBeCloseTo(5.5);
    expect(c.high).toBe(10);
  });

  it('calls and units keep low <= expected <= high, and grow with the events', () => {
    const range = fc.tuple(fc.nat(50_000), fc.nat(50_000), fc.nat(50_000)).map((xs) => xs.sort((a, b) => a - b));
    fc.assert(
      fc.property(range, fc.double({ min: 1, max: 2.5, noNaN: true }), ([low, expected, high], factor) => {
        const events = { low, expected, high };
        const calls = windowCalls(events, { expected: factor, high: Math.max(factor, 2.5), measuredWindows: 3 });
        const units = windowUnits(events, calls, { expected: 1.1, high: 2.5 });
        return (
          calls.low >= 1 &&
          calls.low <= calls.expected &&
          calls.expected <= calls.high &&
          units.low <= units.expected + 1e-9 &&
          units.expected <= units.high + 1e-9
        );
      }),
    );
  });

  it('measures the order factor on full windows only, never below 1', () => {
    expect(orderFactor([{ events: 50, billedCalls: 1, units: 50 }])).toEqual(DEFAULT_ORDER_FACTOR);
    const f = orderFactor([
      { events: 1000, billedCalls: 6, units: 1100 },
      { events: 2000, billedCalls: 11, units: 2100 },
      { events: 50, billedCalls: 1, units: 50 },
      { events: 400, billedCalls: 2, units: 400 },
    ]);
    expect(f.expected).toBeCloseTo(19 / 17);
    expect(f.measuredWindows).toBe(3);
    expect(f.high).toBeGreaterThanOrEqual(f.expected);
    expect(orderFactor([{ events: 1000, billedCalls: 4, units: 900 }]).expected).toBe(1);
    expect(unitsFactor([{ events: 1000, billedCalls: 6, units: 1100 }]).expected).toBeCloseTo(1.1);
  });

  it('wall time: calls spread over the workers, never below the longest window', () => {
    const base = { lanes: 1, latencyMs: 100, cycleMs: 200 };
    expect(wallSeconds({ ...base, callsPerPartition: [10, 10, 10, 10], concurrency: 4 })).toBeCloseTo(2);
    expect(wallSeconds({ ...base, callsPerPartition: [10, 10, 10, 10], concurrency: 1 })).toBeCloseTo(8);
    expect(wallSeconds({ ...base, callsPerPartition: [40, 1, 1], concurrency: 8 })).toBeCloseTo(8);
    expect(wallSeconds({ ...base, callsPerPartition: [], concurrency: 8 })).toBe(0);
    // Not measured: latency plus the answer transaction, lanes shortening the longest window.
    expect(
      wallSeconds({ callsPerPartition: [40], concurrency: 1, lanes: 4, latencyMs: 450, cycleMs: null }),
    ).toBeCloseTo(20);
  });

  it('rounds outward, takes medians, and plans one call per indicator chunk', () => {
    expect(rounded({ low: 4.7, expected: 5.5, high: 6.1 })).toEqual({ low: 4, expected: 6, high: 7 });
    // Nothing expected prints 0, never -0.
    const none = rounded({ low: 0, expected: 0, high: 0 });
    expect([none.low, none.expected, none.high].map((v) => Object.is(v, -0))).toEqual([false, false, false]);
    expect(median([])).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    const e = indicatorEstimate(
      [
        { startYear: 1960, endYear: 2029 },
        { startYear: 2030, endYear: 2030 },
      ],
      1,
    );
    expect(e.calls).toEqual({ low: 2, expected: 2, high: 2 });
    expect(e.units.expected).toBe(71);
    // A gateway whose answers left years out took 1.5 calls a chunk lately: never more than a chunk's years.
    const paged = indicatorEstimate(
      [
        { startYear: 1960, endYear: 2029 },
        { startYear: 2030, endYear: 2030 },
      ],
      1,
      1.5,
    );
    expect(paged.calls).toEqual({ low: 2, expected: 2.5, high: 3 });
  });
});

describe('--sample', () => {
  const windows = Array.from({ length: 10 }, (_, i) => ({ startMs: i * 31 * DAY, endMs: (i + 1) * 31 * DAY }));

  it('spreads the samples evenly, repeating windows only when there are more samples than windows', () => {
    expect(sampleWindows(windows, 2)).toEqual([windows[2], windows[7]]);
    expect(new Set(sampleWindows(windows, 10)).size).toBe(10);
    expect(sampleWindows(windows, 25)).toHaveLength(25);
    expect(sampleWindows([], 3)).toEqual([]);
  });

  it('shrinks after a full answer (to half the span its events covered when that is shorter), grows after a sparse one', () => {
    expect(nextLengthMs(8 * DAY, 200, 8 * DAY, 31 * DAY)).toBe(2 * DAY);
    expect(nextLengthMs(8 * DAY, 200, DAY, 31 * DAY)).toBe(DAY / 2);
    expect(nextLengthMs(8 * DAY, 10, DAY, 31 * DAY)).toBe(16 * DAY);
    expect(nextLengthMs(20 * DAY, 10, DAY, 31 * DAY)).toBe(31 * DAY);
    expect(nextLengthMs(8 * DAY, 120, DAY, 31 * DAY)).toBe(8 * DAY);
  });

  it('sample intervals lie inside their window, on whole seconds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 1, max: 40 * DAY }),
        fc.nat(100),
        (w, lengthMs, k) => {
          const window = { startMs: windows[w]!.startMs + 123, endMs: windows[w]!.endMs - 456 };
          const i = sampleInterval(window, lengthMs, k);
          return (
            i.startMs >= window.startMs &&
            i.endMs <= window.endMs &&
            i.endMs > i.startMs &&
            i.startMs % 1000 === 0 &&
            i.endMs % 1000 === 0
          );
        },
      ),
    );
  });

  it('a window dense in earlier answers starts at half a cap; earlier samples place the next one', () => {
    const s = new SampleSchedule(windows.slice(0, 2), 4);
    const whole = s.next()!;
    expect(whole.interval).toEqual({ startMs: 0, endMs: 31 * DAY });
    s.answered(whole, 200, 31 * DAY);
    const shrunk = s.next()!;
    const shrunkMs = shrunk.interval.endMs - shrunk.interval.startMs;
    s.answered(shrunk, 150, shrunkMs);
    const next = s.next()!;
    expect(next.window).toBe(windows[1]);
    const halfCapMs = (100 * shrunkMs) / 150;
    expect(Math.abs(next.interval.endMs - next.interval.startMs - halfCapMs)).toBeLessThan(2000);

    const w = windows[2]!;
    const earlier = [{ interval: { startMs: w.startMs, endMs: w.startMs + DAY }, events: 100, full: false }];
    const step = new SampleSchedule([w], 1, earlier).next()!;
    expect(step.interval.endMs - step.interval.startMs).toBe(DAY);
  });

  it('--sample takes 1 to 1000', () => {
    expect(parseSampleFlag(undefined)).toBe(0);
    expect(parseSampleFlag('12')).toBe(12);
    for (const bad of ['0', '-1', '1.5', 'x', '1001']) expect(() => parseSampleFlag(bad)).toThrow(UsageError);
  });
});

describe('plan output', () => {
  const plan: Plan = {
    operation: 'earthquake',
    streams: [{ streamKey: 'earthquake:all', windows: 3, windowsCovered: 2 }],
    windows: 3,
    windowsCovered: 2,
    estimatedBilledCalls: null,
    estimatedUnits: null,
    estimatedSeconds: null,
    minimumBilledCalls: 3,
    density: {
      windows: { exact: 0, scaled: 0, bounded: 0, extrapolated: 0, unknown: 3 },
      sourceStreams: [],
      samples: 0,
    },
    orderFactor: DEFAULT_ORDER_FACTOR,
    capProbe: 'none',
    latencyMs: 500,
    latencySource: 'default',
    callCycleMs: null,
    concurrency: 4,
    plannedWindows: [{ window: { startMs: 0, endMs: 1 }, density: 'unknown' }],
  };

  it('--json is one object with the promised keys first, the internal window list left out', () => {
    const json = planJson({ plan, sampled: null });
    expect(Object.keys(json).slice(0, 6)).toEqual([
      'operation',
      'windows',
      'windowsCovered',
      'estimatedBilledCalls',
      'estimatedUnits',
      'estimatedSeconds',
    ]);
    expect(json).not.toHaveProperty('plannedWindows');
    expect(JSON.parse(JSON.stringify(json))).toMatchObject({
      windows: 3,
      windowsCovered: 2,
      estimatedBilledCalls: null,
    });
  });

  it('says when no density is known, and what to do about it', () => {
    const text = planLines({ plan, sampled: null }).join('\n');
    expect(text).toMatch(/3 windows to fetch, 2 already covered/);
    expect(text).toMatch(/no event density is known.*at least 3/);
    expect(text).toMatch(/--sample N/);
    expect(billedCallsToConfirm(plan)).toBe(3);
  });

  it('a series whose done chunk covers part of the range is said to be partly covered, not skipped', () => {
    const indicators: Plan = {
      ...plan,
      operation: 'indicator',
      windows: 10,
      windowsCovered: 2,
      streams: [
        ...['US', 'WLD'].map((c) => ({ streamKey: `indicator:SP.POP.TOTL:${c}`, windows: 1, windowsCovered: 1 })),
        ...Array.from({ length: 8 }, (_, i) => ({ streamKey: `indicator:X:${i}`, windows: 1, windowsCovered: 0 })),
      ],
    };
    expect(planLines({ plan: indicators, sampled: null }).slice(0, 2)).toEqual([
      'plan: 10 year chunks to fetch, 2 already covered (10 streams)',
      '  2 of 10 streams partly covered: only the years they lack are in the year chunks to fetch',
    ]);
  });

  it('shows the estimate with its range, and confirms on the expectation', () => {
    const known: Plan = {
      ...plan,
      estimatedBilledCalls: { low: 1200, expected: 1500, high: 3000 },
      estimatedUnits: { low: 1, expected: 2, high: 3, unit: 'events' },
      estimatedSeconds: 600,
    };
    expect(planLines({ plan: known, sampled: null }).join('\n')).toMatch(
      /estimated billed calls: 1,500 \(1,200 to 3,000\)[\s\S]*estimated time: 10 min/,
    );
    expect(billedCallsToConfirm(known)).toBe(1500);
  });
});

describe('plan takes the flags of backfill', () => {
  const longs = (c: ReturnType<typeof backfillCommand>, sub: string) =>
    c.commands
      .find((x) => x.name() === sub)!
      .options.map((o) => o.long)
      .filter((l): l is string => l !== undefined);

  it.each(['earthquakes', 'indicators'])('%s: every range flag of backfill, and --json, --sample, --refresh', (sub) => {
    const run = new Set(['--wait', '--inline', '--dry-run', '--yes', '--max-billed-calls']);
    const backfill = longs(backfillCommand(), sub).filter((l) => !run.has(l));
    expect(longs(planCommand(), sub).sort()).toEqual(
      expect.arrayContaining([...backfill, '--json', '--sample', '--refresh'].sort()),
    );
  });
});
