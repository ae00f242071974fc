/**
 * How many stored events a chunk of a re-read may hold: learned from the read's own recounts, never
 * past the cap less the exact margin, and cut into chunks of one size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evenTake, exactMargin, fitOf, storedTake } from '../../src/planning/truncation/fit.js';

const recount = fc.record({
  stored: fc.integer({ min: 0, max: 20_000 }),
  added: fc.integer({ min: -500, max: 2_000 }),
});
const cap = fc.integer({ min: 10, max: 200 });

describe('the stored fit', () => {
  it('aims at 93% of the cap before anything is counted again', () => {
    expect(fitOf(200).stored).toBe(186);
  });

  it('rises toward the cap less the exact margin while recounts find nothing new', () => {
    expect(fitOf(200, { stored: 400, added: 0 }).stored).toBeGreaterThanOrEqual(192);
    expect(fitOf(200, { stored: 8_000, added: 0 }).stored).toBeGreaterThanOrEqual(196);
  });

  it('falls where recounts find more new events, and stays at least one', () => {
    fc.assert(
      fc.property(cap, recount, fc.integer({ min: 1, max: 500 }), (c, r, more) => {
        const fit = fitOf(c, r).stored;
        expect(fitOf(c, { ...r, added: r.added + more }).stored).toBeLessThanOrEqual(fit);
        expect(fit).toBeGreaterThanOrEqual(1);
        expect(fit).toBeLessThanOrEqual(c - exactMargin(c));
      }),
    );
  });

  it('does not fall when recounts add stored events and nothing new', () => {
    fc.assert(
      fc.property(cap, recount, fc.integer({ min: 1, max: 5_000 }), (c, r, more) => {
        const after = { stored: r.stored + more, added: Math.max(0, r.added) };
        expect(fitOf(c, after).stored).toBeGreaterThanOrEqual(fitOf(c, { ...r, added: Math.max(0, r.added) }).stored);
      }),
    );
  });

  it('is more careful for lanes (deviations) than for a walk', () => {
    fc.assert(
      fc.property(cap, recount, (c, r) => {
        expect(fitOf(c, r, 1).stored).toBeLessThanOrEqual(fitOf(c, r).stored);
      }),
    );
  });
});

describe('even chunks', () => {
  it('take as many chunks as the most a chunk may take, each no larger', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5_000 }), cap, fc.integer({ min: 1, max: 10 }), (left, c, perPoint) => {
        const fit = fitOf(c);
        const most = storedTake(fit, perPoint);
        const even = evenTake(left, fit, perPoint);
        expect(even).toBeLessThanOrEqual(most);
        expect(Math.ceil(left / even)).toBe(Math.ceil(left / most));
      }),
    );
  });
});
