import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Adjacency,
  type Range,
  coverageOf,
  measure,
  mergeRanges,
  subtractRanges,
} from '../../src/domain/ranges.js';

const interval = (lo = -500, hi = 500, maxLen = 120): fc.Arbitrary<Range> =>
  fc
    .tuple(fc.integer({ min: lo, max: hi }), fc.integer({ min: 0, max: maxLen }))
    .map(([start, len]) => ({ start, end: start + len }));
const intervals = fc.array(interval(), { maxLength: 12 });
const adjacency = fc.constantFrom<Adjacency>(0, 1);

/** Membership in the set an interval list denotes: closed reals for ms, whole numbers for years. */
const contains = (list: readonly Range[], x: number): boolean => list.some((i) => i.start <= x && x <= i.end);

/** Probe points: every whole number near the data and, for the continuous reading, halfway points. */
const probes = (adj: Adjacency): number[] => {
  const whole = Array.from({ length: 1500 }, (_, k) => k - 700);
  return adj === 1 ? whole : whole.flatMap((x) => [x, x + 0.5]);
};

/** Length of the common part of two intervals, 0 when they only touch or are apart. */
const overlap = (a: Range, b: Range, adj: Adjacency): number =>
  Math.max(0, Math.min(a.end, b.end) + adj - Math.max(a.start, b.start));

describe('mergeRanges', () => {
  it('merges touching years with adjacency 1 but not with adjacency 0', () => {
    const decades = [
      { start: 1970, end: 1979 },
      { start: 1960, end: 1969 },
    ];
    expect(mergeRanges(decades, 1)).toEqual([{ start: 1960, end: 1979 }]);
    expect(mergeRanges(decades)).toEqual([
      { start: 1960, end: 1969 },
      { start: 1970, end: 1979 },
    ]);
    expect(
      mergeRanges([
        { start: 0, end: 10 },
        { start: 10, end: 20 },
      ]),
    ).toEqual([{ start: 0, end: 20 }]);
  });

  it('rejects an interval that ends before it starts', () => {
    expect(() => mergeRanges([{ start: 5, end: 4 }])).toThrow(RangeError);
    expect(() => mergeRanges([{ start: 0.5, end: 4 }])).toThrow(RangeError);
  });

  it('does not mutate its input', () => {
    const input = [
      { start: 0, end: 10 },
      { start: 5, end: 20 },
    ];
    mergeRanges(input);
    expect(input).toEqual([
      { start: 0, end: 10 },
      { start: 5, end: 20 },
    ]);
  });

  it('is idempotent and independent of input order', () => {
    fc.assert(
      fc.property(intervals, adjacency, (list, adj) => {
        const merged = mergeRanges(list, adj);
        expect(mergeRanges(merged, adj)).toEqual(merged);
        expect(mergeRanges([...list].reverse(), adj)).toEqual(merged);
      }),
    );
  });

  it('returns sorted intervals that neither overlap nor touch', () => {
    fc.assert(
      fc.property(intervals, adjacency, (list, adj) => {
        const merged = mergeRanges(list, adj);
        merged.forEach((next, k) => {
          const prev = merged[k - 1];
          if (prev) expect(next.start).toBeGreaterThan(prev.end + adj);
        });
      }),
    );
  });

  it('keeps exactly the same set of points', () => {
    fc.assert(
      fc.property(intervals, adjacency, (list, adj) => {
        const merged = mergeRanges(list, adj);
        for (const x of probes(adj)) expect(contains(merged, x)).toBe(contains(list, x));
      }),
      { numRuns: 50 },
    );
  });
});

describe('subtractRanges', () => {
  it('keeps covered boundary points in ms gaps', () => {
    expect(subtractRanges({ start: 0, end: 100 }, [{ start: 10, end: 50 }])).toEqual([
      { start: 0, end: 10 },
      { start: 50, end: 100 },
    ]);
  });

  it('starts a year gap after the covered years', () => {
    expect(subtractRanges({ start: 1960, end: 2000 }, [{ start: 1960, end: 1969 }], 1)).toEqual([
      { start: 1970, end: 2000 },
    ]);
    expect(subtractRanges({ start: 1960, end: 2000 }, [{ start: 1980, end: 1980 }], 1)).toEqual([
      { start: 1960, end: 1979 },
      { start: 1981, end: 2000 },
    ]);
  });

  it('returns nothing for a fully covered range or a zero-length ms range', () => {
    expect(
      subtractRanges({ start: 0, end: 100 }, [
        { start: -5, end: 40 },
        { start: 40, end: 200 },
      ]),
    ).toEqual([]);
    expect(subtractRanges({ start: 7, end: 7 }, [])).toEqual([]);
    expect(subtractRanges({ start: 7, end: 7 }, [], 1)).toEqual([{ start: 7, end: 7 }]);
  });

  it('ignores zero-length covered ms intervals, which cover no time', () => {
    expect(subtractRanges({ start: 0, end: 100 }, [{ start: 50, end: 50 }])).toEqual([{ start: 0, end: 100 }]);
  });

  it('rejects an inverted range', () => {
    expect(() => subtractRanges({ start: 10, end: 0 }, [])).toThrow(RangeError);
  });

  it('leaves every uncovered point of the range in a gap and no gap inside a covered area', () => {
    fc.assert(
      fc.property(interval(-300, 300, 400), intervals, adjacency, (range, covered, adj) => {
        const gaps = subtractRanges(range, covered, adj);
        if (measure(range, adj) === 0) {
          // A zero-length ms range holds no time to fetch, even where nothing covers it.
          expect(gaps).toEqual([]);
          return;
        }
        for (const x of probes(adj)) {
          if (contains([range], x) && !contains(covered, x)) expect(contains(gaps, x)).toBe(true);
          if (!contains([range], x)) expect(contains(gaps, x)).toBe(false);
        }
        for (const gap of gaps) {
          expect(measure(gap, adj)).toBeGreaterThan(0);
          for (const c of covered) expect(overlap(gap, c, adj)).toBe(0);
        }
      }),
      { numRuns: 50 },
    );
  });
});

describe('coverageOf', () => {
  it('reports covered parts, gaps and the covered fraction', () => {
    expect(coverageOf({ start: 1960, end: 1979 }, [{ start: 1950, end: 1964 }], 1)).toEqual({
      covered: [{ start: 1960, end: 1964 }],
      gaps: [{ start: 1965, end: 1979 }],
      coveredFraction: 0.25,
    });
    expect(coverageOf({ start: 5, end: 5 }, []).coveredFraction).toBe(1);
  });

  it('covered and gaps alternate and together make up exactly the range', () => {
    fc.assert(
      fc.property(interval(-300, 300, 400), intervals, adjacency, (range, covered, adj) => {
        const coverage = coverageOf(range, covered, adj);
        const pieces = [...coverage.covered, ...coverage.gaps].sort((a, b) => a.start - b.start);
        const total = measure(range, adj);
        if (total === 0) {
          expect(pieces).toEqual([]);
          return;
        }
        expect(pieces[0]?.start).toBe(range.start);
        expect(pieces.at(-1)?.end).toBe(range.end);
        pieces.forEach((piece, k) => {
          const prev = pieces[k - 1];
          if (prev) expect(piece.start).toBe(prev.end + adj);
        });
        const coveredMeasure = coverage.covered.reduce((sum, i) => sum + measure(i, adj), 0);
        const gapMeasure = coverage.gaps.reduce((sum, i) => sum + measure(i, adj), 0);
        expect(coveredMeasure + gapMeasure).toBe(total);
        expect(coverage.coveredFraction).toBeCloseTo(coveredMeasure / total, 12);
        expect(coverage.gaps).toEqual(subtractRanges(range, covered, adj));
      }),
    );
  });
});
