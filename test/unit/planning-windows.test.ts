import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { earthquakeRequestSchema } from '../../src/gateway/schemas.js';
import { windowRegion } from '../../src/planning/truncation/index.js';
import { fromRange, type Interval } from '../../src/domain/interval.js';
import { parseWindowKey, planLookbackWindows, planWindows, windowKey } from '../../src/planning/windows.js';
import { EARTHQUAKE_PROVIDER, LIMITS } from '../../src/domain/spec.js';
import { DAY_MS, toRfc3339 } from '../../src/domain/time.js';
import { type Range, coverageOf } from '../../src/domain/ranges.js';

const MAX_MS = LIMITS.maxWindowDays * DAY_MS;
const YEAR_MS = 366 * DAY_MS;
const utc = (iso: string): number => Date.parse(iso);

const fromMs = fc.integer({ min: utc('1970-01-01T00:00:00Z'), max: utc('2090-01-01T00:00:00Z') });
/** Short spans around the window size as well as multi-year backfills. */
const spanMs = fc.oneof(
  fc.integer({ min: 1, max: 3 * MAX_MS }),
  fc.integer({ min: 1, max: 10 * YEAR_MS }),
  fc.constantFrom(1, MAX_MS - 1, MAX_MS, MAX_MS + 1, 2 * MAX_MS),
);
const range = fc.tuple(fromMs, spanMs).map(([from, span]) => ({ fromMs: from, toMs: from + span }));

/** Covered windows in and around the range, so some start before it or end after it. */
const coveredIn = (from: number, to: number): fc.Arbitrary<Range[]> => {
  const pad = Math.max(1, Math.floor((to - from) / 4));
  return fc.array(
    fc
      .tuple(
        fc.integer({ min: from - pad, max: to + pad }),
        fc.integer({ min: 0, max: Math.max(1, Math.floor((to - from) / 2)) }),
      )
      .map(([start, len]) => ({ start, end: start + len })),
    { maxLength: 8 },
  );
};
const rangeWithCoverage = range.chain((r) => fc.tuple(fc.constant(r), coveredIn(r.fromMs, r.toMs)));

const inAny = (list: readonly { start: number; end: number }[], x: number): boolean =>
  list.some((i) => i.start <= x && x <= i.end);
const asIntervals = (windows: readonly Interval[]): Range[] => windows.map((w) => ({ start: w.startMs, end: w.endMs }));
const overlapMs = (a: Range, b: Range): number => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));

describe('planWindows examples', () => {
  it('splits ten years into 118 windows two seconds short of 31 days, so widened queries stay within 31', () => {
    const windows = planWindows({ fromMs: utc('2015-01-01T00:00:00Z'), toMs: utc('2025-01-01T00:00:00Z') });
    expect(windows).toHaveLength(118);
    expect(windowKey(windows[0]!)).toBe('2015-01-01T00:00:00Z/2015-01-31T23:59:58Z');
    expect(windowKey(windows[1]!)).toBe('2015-01-31T23:59:58Z/2015-03-03T23:59:56Z');
    expect(windows.at(-1)!.endMs).toBe(utc('2025-01-01T00:00:00Z'));
    for (const w of windows) expect(w.endMs - w.startMs + 2000).toBeLessThanOrEqual(MAX_MS);
  });

  it('gives no window for a zero-length range and throws for an inverted one', () => {
    expect(planWindows({ fromMs: 1000, toMs: 1000 })).toEqual([]);
    expect(() => planWindows({ fromMs: 1001, toMs: 1000 })).toThrow(RangeError);
  });

  it('rejects window sizes the gateway would refuse', () => {
    for (const windowDays of [0, -1, 32, Number.NaN]) {
      expect(() => planWindows({ fromMs: 0, toMs: DAY_MS, windowDays })).toThrow(RangeError);
    }
  });

  it('plans only the gaps between ingested windows, keeping their boundary instants', () => {
    const jan = utc('2020-01-01T00:00:00Z');
    const feb = utc('2020-02-01T00:00:00Z');
    const mar = utc('2020-03-01T00:00:00Z');
    const apr = utc('2020-04-01T00:00:00Z');
    const windows = planWindows({ fromMs: jan, toMs: apr, coveredMs: [{ startMs: feb, endMs: mar }] });
    expect(windows.map(windowKey)).toEqual([
      '2020-01-01T00:00:00Z/2020-01-31T23:59:58Z',
      '2020-01-31T23:59:58Z/2020-02-01T00:00:00Z',
      '2020-03-01T00:00:00Z/2020-03-31T23:59:58Z',
      '2020-03-31T23:59:58Z/2020-04-01T00:00:00Z',
    ]);
    expect(planWindows({ fromMs: feb, toMs: mar, coveredMs: [{ startMs: jan, endMs: apr }] })).toEqual([]);
  });
});

describe('planWindows properties', () => {
  it('covers the range exactly with consecutive windows of at most windowDays', () => {
    fc.assert(
      fc.property(range, fc.integer({ min: 1, max: LIMITS.maxWindowDays }), ({ fromMs, toMs }, windowDays) => {
        const windows = planWindows({ fromMs, toMs, windowDays });
        const windowMs = windowDays * DAY_MS - 2000;
        expect(windows).toHaveLength(Math.ceil((toMs - fromMs) / windowMs));
        expect(windows[0]?.startMs).toBe(fromMs);
        expect(windows.at(-1)?.endMs).toBe(toMs);
        windows.forEach((w, k) => {
          expect(w.endMs - w.startMs).toBeGreaterThan(0);
          expect(w.endMs - w.startMs).toBeLessThanOrEqual(windowMs);
          if (k < windows.length - 1) expect(w.endMs - w.startMs).toBe(windowMs);
          const prev = windows[k - 1];
          if (prev) expect(w.startMs).toBe(prev.endMs);
        });
      }),
    );
  });

  it('produces windows whose widened queries the gateway request schema accepts', () => {
    fc.assert(
      fc.property(range, ({ fromMs, toMs }) => {
        const schema = earthquakeRequestSchema(() => new Date(toMs));
        for (const w of planWindows({ fromMs, toMs })) {
          const { lo, hi } = windowRegion(w);
          const request = { provider: EARTHQUAKE_PROVIDER, start_time: toRfc3339(lo), end_time: toRfc3339(hi) };
          expect(schema.safeParse(request).success).toBe(true);
        }
      }),
      { numRuns: 30 },
    );
  });

  it('with coverage, puts every uncovered instant in a window and no window inside covered time', () => {
    fc.assert(
      fc.property(
        rangeWithCoverage,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }),
        ([r, covered], samples) => {
          const windows = planWindows({ ...r, coveredMs: covered.map(fromRange) });
          const planned = asIntervals(windows);
          const edges = covered.flatMap((c) => [c.start - 1, c.start, c.start + 1, c.end - 1, c.end, c.end + 1]);
          const points = [...edges, ...samples.map((s) => r.fromMs + s * (r.toMs - r.fromMs)), r.fromMs, r.toMs];
          for (const x of points) {
            const inRange = r.fromMs <= x && x <= r.toMs;
            if (inRange && !inAny(covered, x)) expect(inAny(planned, x)).toBe(true);
            if (!inRange) expect(inAny(planned, x)).toBe(false);
          }
          for (const w of planned) {
            expect(w.end - w.start).toBeGreaterThan(0);
            expect(w.end - w.start).toBeLessThanOrEqual(MAX_MS);
            for (const c of covered) expect(overlapMs(w, c)).toBe(0);
          }
        },
      ),
    );
  });

  it('with coverage, plans exactly the uncovered time and no window twice', () => {
    fc.assert(
      fc.property(rangeWithCoverage, ([r, covered]) => {
        const windows = planWindows({ ...r, coveredMs: covered.map(fromRange) });
        const coverage = coverageOf({ start: r.fromMs, end: r.toMs }, covered);
        const planned = windows.reduce((sum, w) => sum + (w.endMs - w.startMs), 0);
        const gaps = coverage.gaps.reduce((sum, g) => sum + (g.end - g.start), 0);
        expect(planned).toBe(gaps);
        windows.forEach((w, k) => {
          const prev = windows[k - 1];
          if (prev) expect(w.startMs).toBeGreaterThanOrEqual(prev.endMs);
        });
      }),
    );
  });
});

describe('planLookbackWindows', () => {
  const now = utc('2025-06-05T12:34:56.789Z');

  it('re-reads the recent past ending at now', () => {
    expect(planLookbackWindows({ nowMs: now, lookbackMs: 7 * DAY_MS })).toEqual([
      { startMs: now - 7 * DAY_MS, endMs: now },
    ]);
    const windows = planLookbackWindows({ nowMs: now, lookbackMs: 90 * DAY_MS });
    expect(windows).toHaveLength(3);
    expect(windows.at(-1)?.endMs).toBe(now);
    expect(planLookbackWindows({ nowMs: now, lookbackMs: 10 * DAY_MS, windowDays: 1 })).toHaveLength(11);
  });

  it('plans nothing for no lookback and rejects a negative one', () => {
    expect(planLookbackWindows({ nowMs: now, lookbackMs: 0 })).toEqual([]);
    expect(() => planLookbackWindows({ nowMs: now, lookbackMs: -1 })).toThrow(RangeError);
  });

  it('equals planWindows over [now - lookback, now]', () => {
    fc.assert(
      fc.property(fromMs, fc.integer({ min: 0, max: 2 * YEAR_MS }), (nowMs, lookbackMs) => {
        expect(planLookbackWindows({ nowMs, lookbackMs })).toEqual(
          planWindows({ fromMs: nowMs - lookbackMs, toMs: nowMs }),
        );
      }),
    );
  });
});

describe('window keys', () => {
  it('round-trips every planned window', () => {
    fc.assert(
      fc.property(range, ({ fromMs, toMs }) => {
        for (const w of planWindows({ fromMs, toMs })) expect(parseWindowKey(windowKey(w))).toEqual(w);
      }),
      { numRuns: 50 },
    );
  });

  it('keeps milliseconds only when they are not zero', () => {
    const w = { startMs: utc('2025-01-01T00:00:00.250Z'), endMs: utc('2025-01-02T00:00:00Z') };
    expect(windowKey(w)).toBe('2025-01-01T00:00:00.250Z/2025-01-02T00:00:00Z');
    expect(parseWindowKey(windowKey(w))).toEqual(w);
  });

  it('rejects malformed, non-canonical and inverted keys', () => {
    for (const key of [
      '',
      'x',
      '2015-01-01T00:00:00Z',
      '2015-01-01T00:00:00Z/2015-02-01T00:00:00Z/2015-03-01T00:00:00Z',
      '2015-01-01T01:00:00+01:00/2015-02-01T00:00:00Z',
      '2015-01-01T00:00:00.000Z/2015-02-01T00:00:00Z',
      '2015-02-01T00:00:00Z/2015-01-01T00:00:00Z',
      '2015-01-01T00:00:00Z/2015-01-01T00:00:00Z',
    ]) {
      expect(() => parseWindowKey(key), key).toThrow(RangeError);
    }
  });
});
