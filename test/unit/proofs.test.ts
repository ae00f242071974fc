import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyProof, type Proof } from '../../src/domain/proofs.js';

const HOUR = 3_600_000;

/** Runs of re-reads: intervals proven at increasing times. */
const runs = fc.array(
  fc.record({
    lo: fc.integer({ min: 0, max: 1000 }),
    len: fc.integer({ min: 0, max: 300 }),
    gap: fc.integer({ min: 1, max: 10 * HOUR }),
  }),
  { maxLength: 60 },
);

function replay(steps: Array<{ lo: number; len: number; gap: number }>): { proofs: Proof[]; history: Proof[] } {
  let t = 1e12;
  let proofs: Proof[] = [];
  const history: Proof[] = [];
  for (const s of steps) {
    t += s.gap;
    const p = { lo: s.lo, hi: s.lo + s.len, provenAtMs: t };
    history.push(p);
    proofs = applyProof(proofs, p);
  }
  return { proofs, history };
}

describe('proven coverage', () => {
  it('stays disjoint and sorted, covers exactly what was ever proven, and never claims a part fresher than its last proof', () => {
    fc.assert(
      fc.property(runs, (steps) => {
        const { proofs, history } = replay(steps);
        for (let i = 1; i < proofs.length; i++) expect(proofs[i]!.lo).toBeGreaterThan(proofs[i - 1]!.hi);
        for (let x = 0; x <= 1300; x += 7) {
          const last = history.filter((h) => h.lo <= x && x <= h.hi).at(-1);
          const part = proofs.find((p) => p.lo <= x && x <= p.hi);
          expect(part === undefined).toBe(last === undefined);
          if (last && part) expect(part.provenAtMs).toBeLessThanOrEqual(last.provenAtMs);
        }
      }),
    );
  });

  it('a stream re-read every 10 minutes for a year keeps a bounded number of parts', () => {
    let proofs: Proof[] = [];
    const t0 = 1e12;
    for (let i = 0; i < 6 * 24 * 365; i++) {
      const now = t0 + i * 10 * 60_000;
      proofs = applyProof(proofs, { lo: now - 2 * HOUR, hi: now, provenAtMs: now });
    }
    expect(proofs.length).toBeLessThan(200);
  });
});
