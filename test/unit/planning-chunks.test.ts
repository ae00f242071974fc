import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { indicatorRequestSchema } from '../../src/gateway/schemas.js';
import { type YearChunk, chunkKey, parseChunkKey, planChunks, resolveYearRange } from '../../src/planning/chunks.js';
import { INDICATOR_PROVIDER, LIMITS, yearSpan } from '../../src/domain/spec.js';
import { type Range } from '../../src/domain/ranges.js';

const yearRange = fc
  .tuple(fc.integer({ min: LIMITS.firstYear, max: 2100 }), fc.integer({ min: 1, max: 300 }))
  .map(([fromYear, span]) => ({ fromYear, toYear: fromYear + span - 1 }));
const maxYears = fc.integer({ min: 1, max: 100 });
const coveredYears = fc.array(
  fc
    .tuple(fc.integer({ min: 1940, max: 2420 }), fc.integer({ min: 0, max: 80 }))
    .map(([start, len]): Range => ({ start, end: start + len })),
  { maxLength: 8 },
);

/** How many chunks hold each year, keyed by year. */
const yearCounts = (chunks: readonly YearChunk[]): Map<number, number> => {
  const counts = new Map<number, number>();
  for (const c of chunks) {
    for (let y = c.startYear; y <= c.endYear; y++) counts.set(y, (counts.get(y) ?? 0) + 1);
  }
  return counts;
};
const isCovered = (covered: readonly Range[], year: number): boolean =>
  covered.some((c) => c.start <= year && year <= c.end);

describe('planChunks examples', () => {
  it('keeps 1960-2026 in one chunk and splits 1960-2030 in two', () => {
    expect(planChunks({ fromYear: 1960, toYear: 2026, maxYears: LIMITS.maxYearSpan })).toEqual([
      { startYear: 1960, endYear: 2026 },
    ]);
    expect(planChunks({ fromYear: 1960, toYear: 2030, maxYears: LIMITS.maxYearSpan }).map(chunkKey)).toEqual([
      '1960-2029',
      '2030-2030',
    ]);
  });

  it('splits 1960-2200 into 70-year chunks', () => {
    expect(planChunks({ fromYear: 1960, toYear: 2200, maxYears: 70 }).map(chunkKey)).toEqual([
      '1960-2029',
      '2030-2099',
      '2100-2169',
      '2170-2200',
    ]);
  });

  it('defaults maxYears to the gateway limit', () => {
    expect(planChunks({ fromYear: 1960, toYear: 2030 })).toEqual(
      planChunks({ fromYear: 1960, toYear: 2030, maxYears: LIMITS.maxYearSpan }),
    );
  });

  it('skips years already ingested', () => {
    const covered = [
      { start: 1960, end: 1969 },
      { start: 1990, end: 1999 },
    ];
    expect(planChunks({ fromYear: 1960, toYear: 2005, maxYears: 15, coveredYears: covered }).map(chunkKey)).toEqual([
      '1970-1984',
      '1985-1989',
      '2000-2005',
    ]);
    expect(
      planChunks({ fromYear: 1970, toYear: 1975, maxYears: 70, coveredYears: [{ start: 1960, end: 2000 }] }),
    ).toEqual([]);
  });

  it('rejects an inverted range and a maxYears below one', () => {
    expect(() => planChunks({ fromYear: 2001, toYear: 2000, maxYears: 70 })).toThrow(RangeError);
    expect(() => planChunks({ fromYear: 1960, toYear: 2000, maxYears: 0 })).toThrow(RangeError);
    expect(() => planChunks({ fromYear: 1960, toYear: 2000, maxYears: 1.5 })).toThrow(RangeError);
    expect(() => planChunks({ fromYear: 1960.5, toYear: 2000, maxYears: 70 })).toThrow(RangeError);
  });
});

describe('planChunks properties', () => {
  it('puts every year of the range in exactly one chunk of at most maxYears', () => {
    fc.assert(
      fc.property(yearRange, maxYears, ({ fromYear, toYear }, max) => {
        const chunks = planChunks({ fromYear, toYear, maxYears: max });
        const counts = yearCounts(chunks);
        expect(counts.size).toBe(yearSpan(fromYear, toYear));
        for (let y = fromYear; y <= toYear; y++) expect(counts.get(y)).toBe(1);
        expect(chunks).toHaveLength(Math.ceil(yearSpan(fromYear, toYear) / max));
        chunks.forEach((c, k) => {
          expect(yearSpan(c.startYear, c.endYear)).toBeGreaterThanOrEqual(1);
          expect(yearSpan(c.startYear, c.endYear)).toBeLessThanOrEqual(max);
          if (k < chunks.length - 1) expect(yearSpan(c.startYear, c.endYear)).toBe(max);
          const prev = chunks[k - 1];
          if (prev) expect(c.startYear).toBe(prev.endYear + 1);
        });
      }),
    );
  });

  it('produces chunks the gateway request schema accepts', () => {
    fc.assert(
      fc.property(yearRange, fc.integer({ min: 1, max: LIMITS.maxYearSpan }), ({ fromYear, toYear }, max) => {
        const schema = indicatorRequestSchema(() => new Date(Date.UTC(toYear, 6, 1)));
        for (const c of planChunks({ fromYear, toYear, maxYears: max })) {
          const request = {
            provider: INDICATOR_PROVIDER,
            country: 'WLD',
            indicator: 'SP.POP.TOTL',
            start_year: c.startYear,
            end_year: c.endYear,
          };
          expect(schema.safeParse(request).success).toBe(true);
        }
      }),
      { numRuns: 30 },
    );
  });

  it('with coverage, plans each uncovered year exactly once and no covered year', () => {
    fc.assert(
      fc.property(yearRange, maxYears, coveredYears, ({ fromYear, toYear }, max, covered) => {
        const chunks = planChunks({ fromYear, toYear, maxYears: max, coveredYears: covered });
        const counts = yearCounts(chunks);
        for (let y = fromYear; y <= toYear; y++) expect(counts.get(y)).toBe(isCovered(covered, y) ? undefined : 1);
        for (const [y] of counts) expect(fromYear <= y && y <= toYear).toBe(true);
        for (const c of chunks) expect(yearSpan(c.startYear, c.endYear)).toBeLessThanOrEqual(max);
      }),
    );
  });
});

describe('chunk keys', () => {
  it('round-trips every planned chunk', () => {
    fc.assert(
      fc.property(yearRange, maxYears, ({ fromYear, toYear }, max) => {
        for (const c of planChunks({ fromYear, toYear, maxYears: max })) expect(parseChunkKey(chunkKey(c))).toEqual(c);
      }),
    );
  });

  it('rejects malformed, non-canonical and inverted keys', () => {
    for (const key of [
      '',
      '1960',
      '1960-',
      '-1960',
      '01960-2000',
      '2000-1960',
      '1960-2000-2010',
      'abc',
      '1960 - 2000',
    ]) {
      expect(() => parseChunkKey(key), key).toThrow(RangeError);
    }
  });
});

describe('resolveYearRange', () => {
  it('defaults to the ten years ending with the current year', () => {
    expect(resolveYearRange({ currentYear: 2026 })).toEqual({ fromYear: 2017, toYear: 2026 });
    expect(resolveYearRange({ toYear: 2000, currentYear: 2026 })).toEqual({ fromYear: 1991, toYear: 2000 });
    expect(resolveYearRange({ fromYear: 1960, currentYear: 2026 })).toEqual({ fromYear: 1960, toYear: 2026 });
  });

  it('clamps the default start to the first year', () => {
    expect(resolveYearRange({ toYear: 1965, currentYear: 2026 })).toEqual({ fromYear: 1960, toYear: 1965 });
  });

  it('rejects years before 1960, after the current year, or out of order', () => {
    expect(() => resolveYearRange({ fromYear: 1959, currentYear: 2026 })).toThrow(/before 1960/);
    expect(() => resolveYearRange({ toYear: 1950, currentYear: 2026 })).toThrow(/before 1960/);
    expect(() => resolveYearRange({ toYear: 2027, currentYear: 2026 })).toThrow(/after the current year 2026/);
    expect(() => resolveYearRange({ fromYear: 2020, toYear: 2010, currentYear: 2026 })).toThrow(RangeError);
    expect(() => resolveYearRange({ fromYear: 2000.5, currentYear: 2026 })).toThrow(RangeError);
  });

  it('always returns an ordered range within [1960, currentYear] that planChunks accepts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: LIMITS.firstYear, max: 2200 }),
        fc.option(fc.integer({ min: LIMITS.firstYear, max: 2200 }), { nil: undefined }),
        (currentYear, toYear) => {
          const args = { currentYear, toYear: toYear === undefined ? undefined : Math.min(toYear, currentYear) };
          const { fromYear, toYear: to } = resolveYearRange(args);
          expect(fromYear).toBeGreaterThanOrEqual(LIMITS.firstYear);
          expect(fromYear).toBeLessThanOrEqual(to);
          expect(to).toBeLessThanOrEqual(currentYear);
          expect(yearSpan(fromYear, to)).toBeLessThanOrEqual(10);
          expect(planChunks({ fromYear, toYear: to, maxYears: LIMITS.maxYearSpan })).toHaveLength(1);
        },
      ),
    );
  });
});
