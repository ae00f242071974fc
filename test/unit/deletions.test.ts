import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  GROUP_SPAN_MS,
  MOVE_MS,
  judgeCheck,
  planChecks,
  provenByWindow,
  reachMs,
  type Candidate,
} from '../../src/planning/deletions.js';

const candidates = fc.uniqueArray(
  fc.record({
    id: fc.string({ minLength: 1, maxLength: 6 }),
    timeMs: fc.integer({ min: 1e12, max: 1e12 + 30 * 86_400_000 }),
  }),
  {
    selector: (c) => c.id,
    maxLength: 40,
  },
);

describe('deletion checks', () => {
  it('cover every candidate once, each check reaching MOVE_MS beyond its candidates and spanning at most GROUP_SPAN_MS of them', () => {
    fc.assert(
      fc.property(candidates, (cs) => {
        const checks = planChecks(cs);
        expect(checks.flatMap((c) => c.ids).sort()).toEqual(cs.map((c) => c.id).sort());
        for (const check of checks) {
          const times = cs.filter((c) => check.ids.includes(c.id)).map((c) => c.timeMs);
          expect(Math.max(...times) - Math.min(...times)).toBeLessThanOrEqual(GROUP_SPAN_MS);
          expect(check.region.lo).toBeLessThanOrEqual(Math.min(...times.map((t) => t - reachMs(t))));
          expect(check.region.hi).toBeGreaterThanOrEqual(Math.max(...times.map((t) => t + reachMs(t))));
          expect(check.region.lo % 1000).toBe(0);
          expect(check.region.hi % 1000).toBe(0);
        }
      }),
    );
  });

  it('an answer that may be truncated never marks anything; a complete one marks exactly the missing candidates', () => {
    fc.assert(
      fc.property(
        candidates.filter((cs) => cs.length > 0),
        fc.integer({ min: 1, max: 250 }),
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (cs, size, cap, share) => {
          const [check] = planChecks(cs);
          const mine = cs.filter((c) => check!.ids.includes(c.id));
          const answer = new Set(mine.filter((_, i) => i < share * mine.length).map((c) => c.id));
          const v = judgeCheck(check!, cs, answer, Math.max(size, answer.size), cap);
          expect([...v.present].sort()).toEqual([...answer].sort());
          if (Math.max(size, answer.size) >= cap) {
            expect(v.absent).toEqual([]);
            // What is still unproven is asked again in smaller checks, or left (a lone event).
            const again = v.again.flatMap((c) => c.ids).sort();
            expect(again).toEqual(
              check!.ids.length === 1
                ? []
                : mine
                    .filter((c) => !answer.has(c.id))
                    .map((c) => c.id)
                    .sort(),
            );
          } else {
            expect(v.absent.sort()).toEqual(
              mine
                .filter((c) => !answer.has(c.id))
                .map((c) => c.id)
                .sort(),
            );
            expect(v.again).toEqual([]);
          }
        },
      ),
    );
  });

  it("a window's own answers prove absence only for an unfiltered stream and events well inside it", () => {
    const window = { lo: 0, hi: 10 * 86_400_000 };
    const inside: Candidate = { id: 'a', timeMs: 86_407_000 };
    const nearEdge: Candidate = { id: 'b', timeMs: window.hi - MOVE_MS };
    expect(provenByWindow(inside, window, true)).toBe(true);
    expect(provenByWindow(inside, window, false)).toBe(false);
    expect(provenByWindow(nearEdge, window, true)).toBe(false);
  });

  // A gateway reporting hours: the event stored at 05:00 may have happened at 05:59, past a window
  // ending at 05:00:01, so neither that window's answers nor a check of two minutes prove it gone.
  it('reach as far as a stored time may lie from the true one: an hour for a whole hour', () => {
    const hour = Date.parse('2025-05-11T05:00:00Z');
    expect(reachMs(hour + 12_345)).toBe(MOVE_MS + 60_000);
    expect(reachMs(hour)).toBe(MOVE_MS + 3_600_000);
    const window = { lo: hour - 86_400_000, hi: hour + 1_000 };
    expect(provenByWindow({ id: 'a', timeMs: hour - 30 * 60_000 + 7_000 }, window, true)).toBe(true);
    expect(provenByWindow({ id: 'b', timeMs: hour - 3_600_000 }, window, true)).toBe(false);
    const [check] = planChecks([{ id: 'b', timeMs: hour }]);
    expect(check!.region).toEqual({ lo: hour - 3_600_000 - MOVE_MS, hi: hour + 3_600_000 + MOVE_MS });
  });
});
