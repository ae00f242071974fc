import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterAnswer,
  missingRuns,
  progressOf,
  startingRuns,
  type YearRun,
} from '../../src/planning/indicator-years.js';

const CHUNK: YearRun = { startYear: 1960, endYear: 2026 };

/** A gateway's answer to `run`: the years it holds (a value or null), as one that truncates or drops nulls would. */
interface Gateway {
  /** Years with a value; the rest of the chunk has none. */
  valued: ReadonlySet<number>;
  dropsNulls: boolean;
  cap: number;
  keep: 'newest' | 'oldest' | 'spread';
}

function answer(g: Gateway, run: YearRun): Set<number> {
  const years: number[] = [];
  for (let y = run.endYear; y >= run.startYear; y--) if (!g.dropsNulls || g.valued.has(y)) years.push(y);
  const kept =
    g.keep === 'newest'
      ? years.slice(0, g.cap)
      : g.keep === 'oldest'
        ? years.slice(-g.cap)
        : years.filter((_, i) => i % Math.ceil(years.length / g.cap) === 0);
  return new Set(kept);
}

/** The worker's loop: the calls made and every year some answer held. */
function read(g: Gateway): { calls: number; held: Set<number> } {
  let pending = startingRuns(CHUNK, null);
  const held = new Set<number>();
  let calls = 0;
  while (pending.length > 0) {
    const years = answer(g, pending[0]!);
    calls++;
    years.forEach((y) => held.add(y));
    pending = afterAnswer(pending, years);
  }
  return { calls, held };
}

const gateways = fc.record({
  valued: fc.uniqueArray(fc.integer({ min: 1960, max: 2026 }), { maxLength: 67 }).map((ys) => new Set(ys)),
  dropsNulls: fc.boolean(),
  cap: fc.integer({ min: 1, max: 80 }),
  keep: fc.constantFrom<Gateway['keep']>('newest', 'oldest', 'spread'),
});

describe('the years of an indicator chunk', () => {
  it('a run left out is the consecutive years an answer lacks', () => {
    expect(missingRuns({ startYear: 2000, endYear: 2009 }, new Set([2001, 2002, 2005]))).toEqual([
      { startYear: 2000, endYear: 2000 },
      { startYear: 2003, endYear: 2004 },
      { startYear: 2006, endYear: 2009 },
    ]);
  });

  it('a gateway answering every year asked, nulls included, is read in one call', () => {
    const g: Gateway = { valued: new Set([1990, 2000]), dropsNulls: false, cap: 70, keep: 'newest' };
    expect(read(g)).toEqual({ calls: 1, held: new Set(Array.from({ length: 67 }, (_, i) => 1960 + i)) });
  });

  it('paged fifty values at a time, newest first, as the upstream API does: two calls, every year', () => {
    const g: Gateway = { valued: new Set([1961, 2015]), dropsNulls: false, cap: 50, keep: 'newest' };
    const r = read(g);
    expect(r.calls).toBe(2);
    expect(r.held.size).toBe(67);
  });

  it('whatever a gateway keeps or leaves out, every year with a value is read, in at most a call a year', () => {
    fc.assert(
      fc.property(gateways, (g) => {
        const r = read(g);
        for (const y of g.valued) expect(r.held.has(y)).toBe(true);
        expect(r.calls).toBeLessThanOrEqual(67);
      }),
    );
  });

  it('a saved progress resumes its runs; one that is not a progress of this chunk starts it over', () => {
    const runs = [{ startYear: 1960, endYear: 1976 }];
    expect(startingRuns(CHUNK, progressOf(runs))).toEqual(runs);
    expect(startingRuns(CHUNK, progressOf([]))).toEqual([CHUNK]);
    expect(startingRuns(CHUNK, { ask: [{ startYear: 1900, endYear: 1950 }] })).toEqual([CHUNK]);
    expect(startingRuns(CHUNK, { tasks: [] })).toEqual([CHUNK]);
  });
});
