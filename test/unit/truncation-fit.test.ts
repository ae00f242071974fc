/**
 * How many stored events a chunk of a re-read may hold: learned from the read's own recounts and the
 * share earlier reads learned, never past the cap less the exact margin, and cut into chunks of one size.
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

  it('falls as the share earlier reads learned rises, and stays at least one', () => {
    const share = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(cap, recount, share, share, (c, r, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(fitOf(c, r, hi).stored).toBeLessThanOrEqual(fitOf(c, r, lo).stored);
        expect(fitOf(c, r, hi).stored).toBeGreaterThanOrEqual(1);
      }),
      // A share just above the prior's, weighed less than the prior, once sized chunks larger (10 where 9).
      { examples: [[11, { stored: 485, added: 8 }, 0, 0.030000000000000002]] },
    );
  });

  it('a share learned at or below the prior sizes as nothing learned: it never makes a chunk larger', () => {
    fc.assert(
      fc.property(cap, recount, fc.double({ min: 0, max: 0.03, noNaN: true }), (c, r, learned) => {
        expect(fitOf(c, r, learned)).toEqual(fitOf(c, r, null));
      }),
    );
  });

  it("a learned share above the prior stands in for it, and the read's own recounts outweigh it from the first chunk", () => {
    // 10% new learned: the first chunk a tenth smaller than the 186 of nothing learned.
    expect(fitOf(200, undefined, 0.1).stored).toBeLessThanOrEqual(176);
    // One chunk's recount of a catalog that did not change, after 10% was learned: near the cap again.
    expect(fitOf(200, { stored: 190, added: 0 }, 0.1).stored).toBeGreaterThanOrEqual(190);
    // Four chunks' recounts of a catalog 10% new where nothing was learned: within a few events of where 10% was.
    const learned = fitOf(200, { stored: 780, added: 78 }, 0.1).stored;
    expect(Math.abs(fitOf(200, { stored: 780, added: 78 }, null).stored - learned)).toBeLessThanOrEqual(3);
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
