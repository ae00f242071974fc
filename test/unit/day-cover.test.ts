import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dayCover } from '../../src/domain/day-cover.js';
import { DAY_MS } from '../../src/domain/time.js';

const T0 = Date.UTC(2025, 4, 1);
/** Event times in microseconds' precision, as PostgreSQL stores them, around a few days. */
const times = fc.array(
  fc.integer({ min: 0, max: 5 * DAY_MS * 1000 }).map((us) => T0 + us / 1000),
  { maxLength: 300 },
);
/** Ends anywhere: on midnights, a few ms around them, or anywhere in a day. */
const end = fc.oneof(
  fc.integer({ min: 0, max: 5 }).map((d) => T0 + d * DAY_MS),
  fc
    .tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: -3000, max: 3000 }))
    .map(([d, ms]) => T0 + d * DAY_MS + ms),
  fc.integer({ min: 0, max: 5 * DAY_MS }).map((ms) => T0 + ms),
);

function countByCover(events: readonly number[], lo: number, hi: number): number {
  const c = dayCover({ startMs: lo, endMs: hi });
  const count = (keep: (t: number) => boolean) => events.filter(keep).length;
  let n = count((t) => t >= c.daysFromMs && t < c.daysToMs);
  if (c.addStart) n += count((t) => t >= c.addStart!.fromMs && t < c.addStart!.toMs);
  if (c.subtractStart) n -= count((t) => t >= c.subtractStart!.fromMs && t < c.subtractStart!.toMs);
  if (c.addEnd) n += count((t) => t >= c.addEnd!.fromMs && t <= c.addEnd!.toMs);
  if (c.subtractEnd) n -= count((t) => t > c.subtractEnd!.fromMs && t < c.subtractEnd!.toMs);
  return n;
}

describe('dayCover', () => {
  it('counts exactly what the interval holds, both ends included', () => {
    fc.assert(
      fc.property(times, end, end, (events, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const ends = [lo, hi, lo - 0.0005, hi + 0.0005, lo + 0.0005];
        const all = [...events, ...ends];
        expect(countByCover(all, lo, hi)).toBe(all.filter((t) => t >= lo && t <= hi).length);
      }),
      { numRuns: 2000 },
    );
  });

  it('never reads more than half a day of events at an edge, and whole days from the day totals', () => {
    fc.assert(
      fc.property(end, end, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const c = dayCover({ startMs: lo, endMs: hi });
        for (const e of [c.addStart, c.subtractStart, c.subtractEnd])
          if (e) expect(e.toMs - e.fromMs).toBeLessThanOrEqual(DAY_MS / 2);
        if (c.addEnd && c.daysToMs > c.daysFromMs)
          expect(c.addEnd.toMs - c.addEnd.fromMs).toBeLessThanOrEqual(DAY_MS / 2);
        expect(c.daysFromMs % DAY_MS === 0 || c.daysFromMs === c.daysToMs).toBe(true);
      }),
    );
  });

  it('reads a window two seconds off midnight as two seconds of events', () => {
    const c = dayCover({ startMs: Date.parse('1976-01-31T23:59:58Z'), endMs: Date.parse('1976-03-02T23:59:56Z') });
    expect(c).toEqual({
      daysFromMs: Date.parse('1976-02-01T00:00:00Z'),
      daysToMs: Date.parse('1976-03-03T00:00:00Z'),
      addStart: { fromMs: Date.parse('1976-01-31T23:59:58Z'), toMs: Date.parse('1976-02-01T00:00:00Z') },
      subtractStart: null,
      addEnd: null,
      subtractEnd: { fromMs: Date.parse('1976-03-02T23:59:56Z'), toMs: Date.parse('1976-03-03T00:00:00Z') },
    });
  });
});
