import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FaultPlan } from '../src/faults.js';
import { createRng, deriveRng, sampleInRandomOrder } from '../src/rng.js';
import { KEEP_ORDERS, keepOrderOf, selectByOrder } from '../src/selection.js';

const ascending = Array.from({ length: 10 }, (_, i) => i);

describe('selectByOrder (max_results truncation)', () => {
  it("'newest' keeps the newest N, newest first", () => {
    expect(selectByOrder(ascending, 3, 'newest', createRng(1))).toEqual({ items: [9, 8, 7], truncated: true });
    expect(selectByOrder(ascending, 10, 'newest', createRng(1))).toEqual({
      items: [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
      truncated: false,
    });
  });

  it("'oldest' keeps the oldest N, oldest first", () => {
    expect(selectByOrder(ascending, 3, 'oldest', createRng(1))).toEqual({ items: [0, 1, 2], truncated: true });
    expect(selectByOrder(ascending, 50, 'oldest', createRng(1))).toEqual({ items: ascending, truncated: false });
  });

  it("'random' keeps a seeded random subset in random order", () => {
    const a = selectByOrder(ascending, 4, 'random', createRng(7));
    const b = selectByOrder(ascending, 4, 'random', createRng(7));
    expect(a).toEqual(b);
    expect(a.truncated).toBe(true);
    expect(new Set(a.items).size).toBe(4);
    const all = selectByOrder(ascending, 10, 'random', createRng(7));
    expect(all.truncated).toBe(false);
    expect([...all.items].sort((x, y) => x - y)).toEqual(ascending);
    expect(all.items).not.toEqual(ascending);
  });

  it("'magnitude' keeps the largest N, largest first, null smallest, ties newest first", () => {
    const mags: Record<number, number | null> = { 0: 3, 1: null, 2: 5, 3: 3, 4: 1, 5: 4, 6: null, 7: 3, 8: 0, 9: 2 };
    const magnitudeOf = (i: number): number | null => mags[i] ?? null;
    expect(selectByOrder(ascending, 4, 'magnitude', createRng(1), { magnitudeOf })).toEqual({
      items: [2, 5, 7, 3],
      truncated: true,
    });
    expect(selectByOrder(ascending, 10, 'magnitude', createRng(1), { magnitudeOf }).items).toEqual([
      2, 5, 7, 3, 0, 9, 4, 8, 6, 1,
    ]);
    // Without magnitudes every item ties, and the answer is the newest.
    expect(selectByOrder(ascending, 3, 'magnitude', createRng(1))).toEqual({ items: [9, 8, 7], truncated: true });
  });

  it("'depth' keeps the deepest N, deepest first, null shallowest, ties newest first", () => {
    const depths = [10, null, 35.5, 10, 0, 700, null, 10, -1.2, 35.5];
    const depthOf = (i: number): number | null => depths[i] ?? null;
    // A magnitude accessor alongside must not change the ranking.
    const accessors = { depthOf, magnitudeOf: (i: number): number => -i };
    expect(selectByOrder(ascending, 4, 'depth', createRng(1), accessors)).toEqual({
      items: [5, 9, 2, 7],
      truncated: true,
    });
    expect(selectByOrder(ascending, 10, 'depth', createRng(1), accessors)).toEqual({
      items: [5, 9, 2, 7, 3, 0, 4, 8, 6, 1],
      truncated: false,
    });
    expect(selectByOrder(ascending, 3, 'depth', createRng(1))).toEqual({ items: [9, 8, 7], truncated: true });
  });

  describe("'id' and 'id-desc'", () => {
    // Plain string comparison: 'Z1' before 'ak10' (upper case first) and 'ak10' before 'ak2', as a
    // byte-wise ORDER BY id would; a locale or numeric comparison would order them otherwise.
    const ids = ['us7', 'ak10', 'Z1', 'ak9', 'nc2', 'ak2', 'us10', 'hv1', 'ci5', 'nc10'];
    const idOf = (i: number): string => ids[i]!;

    it("'id' keeps the smallest ids, smallest first", () => {
      expect(selectByOrder(ascending, 4, 'id', createRng(1), { idOf })).toEqual({
        items: [2, 1, 5, 3],
        truncated: true,
      });
      expect(selectByOrder(ascending, 10, 'id', createRng(1), { idOf })).toEqual({
        items: [2, 1, 5, 3, 8, 7, 9, 4, 6, 0],
        truncated: false,
      });
    });

    it("'id-desc' keeps the largest ids, largest first", () => {
      expect(selectByOrder(ascending, 3, 'id-desc', createRng(1), { idOf })).toEqual({
        items: [0, 6, 4],
        truncated: true,
      });
      expect(selectByOrder(ascending, 12, 'id-desc', createRng(1), { idOf })).toEqual({
        items: [0, 6, 4, 9, 7, 8, 3, 5, 1, 2],
        truncated: false,
      });
    });

    it('throws without an id accessor rather than ranking by something else', () => {
      expect(() => selectByOrder(ascending, 3, 'id', createRng(1))).toThrow(/idOf/);
      expect(() => selectByOrder(ascending, 3, 'id-desc', createRng(1), { magnitudeOf: () => 1 })).toThrow(/idOf/);
    });
  });

  it("'newest-swap' keeps the newest N but trades the one at floor(N/2) for the (N+1)-th newest", () => {
    expect(selectByOrder(ascending, 4, 'newest-swap', createRng(1))).toEqual({ items: [9, 8, 6, 5], truncated: true });
    expect(selectByOrder(ascending, 3, 'newest-swap', createRng(1))).toEqual({ items: [9, 7, 6], truncated: true });
    expect(selectByOrder(ascending, 1, 'newest-swap', createRng(1))).toEqual({ items: [8], truncated: true });
    expect(selectByOrder(ascending, 9, 'newest-swap', createRng(1))).toEqual({
      items: [9, 8, 7, 6, 4, 3, 2, 1, 0],
      truncated: true,
    });
    // Not truncated: every event, newest first, nothing swapped.
    expect(selectByOrder(ascending, 10, 'newest-swap', createRng(1))).toEqual({
      items: [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
      truncated: false,
    });
    // 250 matched, max 200: the newest 200 minus the 101st newest (149), plus the 201st newest (49).
    const many = Array.from({ length: 250 }, (_, i) => i);
    const { items, truncated } = selectByOrder(many, 200, 'newest-swap', createRng(1));
    expect(truncated).toBe(true);
    expect(items).toEqual([
      ...many
        .slice(50)
        .reverse()
        .filter((i) => i !== 149),
      49,
    ]);
  });

  it("'mixed' draws 'random' with the given chance, else 'newest'", () => {
    const draw = (ratio: number): string[] => {
      const rng = createRng(5);
      return Array.from({ length: 1000 }, () => keepOrderOf('mixed', ratio, rng));
    };
    expect(new Set(draw(0))).toEqual(new Set(['newest']));
    expect(new Set(draw(1))).toEqual(new Set(['random']));
    const half = draw(0.5).filter((o) => o === 'random').length;
    expect(half).toBeGreaterThan(430);
    expect(half).toBeLessThan(570);
    expect(keepOrderOf('oldest', 1, createRng(5))).toBe('oldest');
  });

  it('never returns more than max, duplicates or foreign items (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer(), { maxLength: 300 }).map((xs) => [...new Set(xs)].sort((x, y) => x - y)),
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom(...KEEP_ORDERS),
        fc.integer(),
        (items, max, order, seed) => {
          const accessors = { idOf: String, magnitudeOf: (x: number) => x % 7, depthOf: (x: number) => x % 5 };
          const { items: got, truncated } = selectByOrder(items, max, order, createRng(seed), accessors);
          expect(got).toHaveLength(Math.min(max, items.length));
          expect(truncated).toBe(items.length > max);
          expect(new Set(got).size).toBe(got.length);
          expect(got.every((x) => items.includes(x))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('seeded randomness', () => {
  it('is reproducible and stream-separated', () => {
    const a = createRng(42);
    const b = createRng(42);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    expect(deriveRng(42, 'order')()).not.toBe(deriveRng(42, 'faults')());
    expect(sampleInRandomOrder([1, 2, 3], 5, createRng(1)).sort()).toEqual([1, 2, 3]);
  });
});

describe('FaultPlan', () => {
  it('serves queued faults first, in order, then falls back to rules', () => {
    const plan = new FaultPlan([], createRng(1));
    plan.inject('rate_limited', 2);
    plan.inject('schema_break', 1);
    expect([plan.next(), plan.next(), plan.next(), plan.next()]).toEqual([
      'rate_limited',
      'rate_limited',
      'schema_break',
      null,
    ]);
  });

  it('applies probabilities with the seeded die', () => {
    const always = new FaultPlan([{ kind: 'server_error', probability: 1 }], createRng(1));
    expect(always.next()).toBe('server_error');
    const never = new FaultPlan([{ kind: 'server_error', probability: 0 }], createRng(1));
    expect(never.next()).toBeNull();
    const half = new FaultPlan([{ kind: 'data_source', probability: 0.5 }], createRng(3));
    const hits = Array.from({ length: 2000 }, () => half.next()).filter((k) => k !== null).length;
    expect(hits).toBeGreaterThan(900);
    expect(hits).toBeLessThan(1100);
  });

  it('rejects bad rules and counts', () => {
    expect(() => new FaultPlan([{ kind: 'server_error', probability: 1.5 }], createRng(1))).toThrow(/probability/);
    expect(() => new FaultPlan([{ kind: 'nope' as 'server_error', probability: 0.5 }], createRng(1))).toThrow(/kind/);
    expect(() => new FaultPlan([], createRng(1)).inject('server_error', -1)).toThrow(/count/);
  });
});
