/**
 * The cost bounds of a first read on a fresh database (cap unknown, no order hint), in simulation:
 * small windows in every order, and each real month per gateway order, in sequence and on lanes.
 * The figures and the command that prints them (`npx tsx bench/truncation-cases.ts`) are in
 * docs/design.md "Cost"; the bounds here are the targets, a little above those figures.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/domain/time.js';
import {
  denseWindowsPastTheData,
  filteredWindowsPastTheData,
  freshKnowledge,
  generatedWindow,
  lostIn,
  monthWindows,
  reReadCost,
  runWindow,
  runWindowConcurrently,
  simulatedGateway,
  smallWindow,
  usgsCatalog,
  withHistory,
  REAL_MONTH_FILES,
  type Adversary,
  type CatalogEvent,
  type Mode,
  type WindowPastTheData,
} from '../support/adversary.js';

type Window = { startMs: number; endMs: number };
const ORDERS: Mode[] = ['newest', 'oldest', 'random', 'magnitude', 'permutation'];
const real = REAL_MONTH_FILES.map((f) => [...usgsCatalog(f)].sort((a, b) => a.timeMs - b.timeMs));

/** One run per window, knowledge shared between windows as a worker shares it; calls and ideal summed. */
function firstRead(catalog: readonly CatalogEvent[], windows: Window[], a: Adversary, seed: number, lanes = 1) {
  const g = simulatedGateway(catalog, a, seed);
  const k = freshKnowledge();
  let calls = 0;
  let ideal = 0;
  for (const w of windows) {
    const r = lanes > 1 ? runWindowConcurrently(g, w, k, { lanes, seed, timed: true }) : runWindow(g, w, k);
    expect(r.failure).toBeNull();
    expect(lostIn(catalog, w, r)).toEqual([]);
    calls += r.calls;
    const n = catalog.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs).length;
    ideal += Math.max(1, Math.ceil(n / (a.cap ?? 200)));
  }
  return { calls, ideal };
}

describe('a window of fewer than 400 events costs at most ceil(n/200) + 2 calls, whatever the order', () => {
  it.each([
    [201, 'spread'],
    [201, 'padded'],
    [260, 'spread'],
    [260, 'padded'],
    [330, 'spread'],
    [330, 'padded'],
    [390, 'spread'],
    [399, 'spread'],
  ] as const)('%s events, %s', (n, layout) => {
    for (const mode of ORDERS)
      for (const [m, catalog] of real.entries())
        for (let seed = 1; seed <= 2; seed++) {
          const { events, window } = smallWindow(catalog, n, layout === 'padded', 100 * m + seed);
          const { calls } = firstRead(events, [window], { mode }, seed);
          expect(calls, `${mode}, month ${m}, seed ${seed}`).toBeLessThanOrEqual(Math.ceil(n / 200) + 2);
        }
  });
});

// The two orders that keep an end give the same first answer with the unseen events on opposite
// sides, so one of them pays a part more than the other (docs/design.md, "What is left"): with no
// hint, the part where a newest-first gateway hides them is asked first, and it pays that part.
describe('property: events in a row, quiet on both sides (a stream whose window reaches past its data)', () => {
  const rows = fc.record({
    n: fc.integer({ min: 201, max: 399 }),
    month: fc.constantFrom(0, 1),
    mode: fc.constantFrom(...ORDERS),
    seed: fc.integer({ min: 1, max: 1_000_000 }),
  });

  it('newest-first at most ceil(n/200) + 3 calls, every other order ceil(n/200) + 2', () => {
    const bound = fc.property(rows, ({ n, month, mode, seed }) => {
      const { events, window } = smallWindow(real[month]!, n, true, seed);
      const { calls } = firstRead(events, [window], { mode }, seed);
      expect(calls, mode).toBeLessThanOrEqual(Math.ceil(n / 200) + (mode === 'newest' ? 3 : 2));
    });
    fc.assert(bound, { numRuns: 200, seed: 26 });
  });
});

/** Generated windows of `min` to `max` events, spread or with a share of them in a burst of an hour. */
const windows = (min: number, max: number, bursts: readonly number[]) =>
  fc
    .record({
      n: fc.integer({ min, max }),
      days: fc.constantFrom(1, 7, 31),
      burst: fc.constantFrom(...bursts),
      mode: fc.constantFrom(...ORDERS),
      seed: fc.integer({ min: 1, max: 1_000_000 }),
    })
    .map(({ n, days, burst, mode, seed }) => ({ ...generatedWindow(n, days, burst, seed), mode, seed }));

const withinBound = (min: number, max: number, bursts: readonly number[]) =>
  fc.property(windows(min, max, bursts), ({ events, window, mode, seed }) => {
    const { calls } = firstRead(events, [window], { mode }, seed);
    expect(calls).toBeLessThanOrEqual(Math.ceil(events.length / 200) + 2);
  });

// Pinned samples: about one generated window in 10,000 costs a call more (a count far from what its
// chunk was sized for, a burst that makes the rate after it overstate the rest); the bench
// (bench/truncation-cases.ts) counts them over many windows, docs/design.md gives the figures.
describe('property: a generated window of fewer than 400 events costs at most ceil(n/200) + 2 calls', () => {
  it('201 to 260 events, in every order, spread or with a burst', () => {
    fc.assert(withinBound(201, 260, [0, 0.3]), { numRuns: 200, seed: 26 });
  });

  it('261 to 395 events spread over the window, in every order', () => {
    fc.assert(withinBound(261, 395, [0]), { numRuns: 200, seed: 26 });
  });

  // Past 395, the chunk just inside a newest- or oldest-first answer proves 196 events and leaves a
  // cap or more, which the rest's two halves ask unless the rate says far less: under 1% of windows.
  it('396 to 399 events spread over the window, in every order: over the bound in under 2%', () => {
    const samples = fc.sample(windows(396, 399, [0]), { numRuns: 400, seed: 26 });
    const over = samples.filter(({ events, window, mode, seed }) => {
      const { calls } = firstRead(events, [window], { mode }, seed);
      return calls > Math.ceil(events.length / 200) + 2;
    });
    expect(over.length).toBeLessThanOrEqual(8);
  });
});

describe('a first read of the 2025-08-19 month, in sequence and on 4 lanes', () => {
  const catalog = real[1]!;
  it.each([
    ['newest', 1.35],
    ['oldest', 1.4],
    ['random', 2],
    ['magnitude', 2],
    ['permutation', 2],
  ] as const)('%s-first stays within %s x ideal', (mode, bound) => {
    for (const lanes of [1, 4]) {
      const { calls, ideal } = firstRead(catalog, monthWindows(catalog), { mode }, 1, lanes);
      expect(calls / ideal, `${lanes} lanes`).toBeLessThanOrEqual(bound);
    }
  });
});

describe('both real months, their times reported to the minute', () => {
  // No proof rests on a reported time; placing does, and on the real catalog a minute seldom holds a
  // cap: every window completes, at the cost of exact times within 2%.
  it.each(['newest', 'oldest', 'random'] as const)(
    '%s-first: every event stored, calls within 2% of exact times',
    (mode) => {
      for (const catalog of real) {
        const exact = firstRead(catalog, monthWindows(catalog), { mode }, 1);
        const minutes = firstRead(catalog, monthWindows(catalog), { mode, reportedUnitMs: 60_000 }, 1);
        expect(minutes.calls).toBeLessThanOrEqual(1.02 * exact.calls);
      }
    },
  );
});

describe('both real months, their times reported to the hour or the day', () => {
  // A day holds more events than a cap. Placed as if reported exactly, every chunk of a newest-first
  // read was cut at a midnight (5.2 to 5.4 x ideal), and windows in other orders failed at their call
  // ceiling; placed from the unit, a day costs about what a second does.
  it.each([
    ['newest', 3_600_000, 1.45],
    ['newest', 86_400_000, 1.6],
    ['oldest', 86_400_000, 1.55],
    ['random', 86_400_000, 1.65],
    ['magnitude', 86_400_000, 1.65],
    ['permutation', 86_400_000, 1.65],
  ] as const)('%s-first, times to %i ms: every window complete, within %s x ideal', (mode, unitMs, bound) => {
    for (const catalog of real) {
      const { calls, ideal } = firstRead(catalog, monthWindows(catalog), { mode, reportedUnitMs: unitMs }, 1);
      expect(calls / ideal).toBeLessThanOrEqual(bound);
    }
  });
});

// The windows the pipeline reads for `backfill 2025-08-19 2025-09-19` and then `2025-05-01 2025-08-19` (31 days less
// the two seconds a query widens them by), over both bundled months: they reach past the data's ends.
const DAY = 86_400_000;
const windowsFrom = (from: string, to: string): Window[] => {
  const out: Window[] = [];
  for (let s = Date.parse(from); s < Date.parse(to); s += 31 * DAY - 2000)
    out.push({ startMs: s, endMs: Math.min(s + 31 * DAY - 2000, Date.parse(to)) });
  return out;
};
const both = [...real[0]!, ...real[1]!];

describe("the pipeline's windows, reaching past the bundled data", () => {
  it('newest-first, the months before a month read first, the cap lapsed between: within 1.35 x ideal', () => {
    const g = simulatedGateway(both, { mode: 'newest' }, 1);
    const k = freshKnowledge();
    windowsFrom('2025-08-19T00:00:00Z', '2025-09-19T00:00:00Z').forEach((w) => runWindow(g, w, k));
    Object.assign(k, { capFloor: 1, measured: null, capRegion: null });
    let [calls, ideal] = [0, 0];
    for (const w of windowsFrom('2025-05-01T00:00:00Z', '2025-08-19T00:00:00Z')) {
      const r = runWindow(g, w, k);
      expect(lostIn(both, w, r)).toEqual([]);
      calls += r.calls;
      ideal += Math.max(1, Math.ceil(both.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs).length / 200));
    }
    expect(calls / ideal).toBeLessThanOrEqual(1.35);
  });

  it('a silent cap of 100 on the month read from midnight, 12 hours before its data: 1.4 x ceil(n/100) + 3', () => {
    const [w] = windowsFrom('2025-08-19T00:00:00Z', '2025-09-19T00:00:00Z');
    const { calls, ideal } = firstRead(real[1]!, [w!], { mode: 'newest', cap: 100 }, 1);
    expect(calls).toBeLessThanOrEqual(1.4 * ideal + 3);
  });

  it('the weeks up to now at a silent cap: the first window measures the cap, no probe asks past now', () => {
    // May's events moved to end where August's begin: history before the last month, as the real catalog has.
    const catalog = withHistory(real[0]!, real[1]!);
    const nowMs = catalog.at(-1)!.timeMs + 1000;
    const g = simulatedGateway(catalog, { mode: 'newest', cap: 100 }, 3);
    const k = freshKnowledge();
    const probes = [0, 1, 2, 3].map((i) => {
      const w = { startMs: nowMs - (i + 1) * 7 * DAY_MS, endMs: nowMs - i * 7 * DAY_MS };
      const r = runWindow(g, w, k, { minMagnitude: 2.5, nowMs });
      expect(lostIn(catalog, w, r, 2.5)).toEqual([]);
      return r.frontier.cap.probes;
    });
    // Probed past now, the second probe found nothing and the next window probed again ([100, 0], [100, 100]).
    expect(probes).toEqual([[100, 100], [], [], []]);
  });
});

/** Each window read on a fresh database: calls, ideal and windows over ceil(n/200) + 2, nothing lost. */
function readEach(windows: readonly WindowPastTheData[], mode: Mode) {
  let [calls, ideal, over] = [0, 0, 0];
  windows.forEach(({ catalog, window: w, minMagnitude: m, n }, i) => {
    const r = runWindow(simulatedGateway(catalog, { mode }, i + 1), w, freshKnowledge(), { minMagnitude: m });
    expect(r.failure).toBeNull();
    expect(lostIn(catalog, w, r, m)).toEqual([]);
    calls += r.calls;
    ideal += Math.max(1, Math.ceil(n / 200));
    if (r.calls > Math.max(1, Math.ceil(n / 200)) + 2) over++;
  });
  return { calls, ideal, over };
}

// The first answer reaches the window's start and leaves its top quiet (`bench/truncation-cases.ts`
// draws 200 such windows).
describe("a filtered stream's window reaching past the data's end", () => {
  const windows = filteredWindowsPastTheData(real, 60, 4242);

  // Measured over these 60: 3, 2 and 4 windows over ideal + 2, 2.03, 2.03 and 2.06 x ideal (were 20,
  // 54 and 54, 2.27, 2.81 and 2.81, before the quiet stretch past the first answer sized the walk).
  it.each([
    ['random', 6],
    ['magnitude', 6],
    ['permutation', 6],
  ] as const)(
    '%s order: nothing lost; at most %s of 60 windows over ceil(n/200) + 2 calls, 2.1 x ideal in all',
    (mode, most) => {
      const { calls, ideal, over } = readEach(windows, mode);
      expect(over).toBeLessThanOrEqual(most);
      expect(calls / ideal).toBeLessThanOrEqual(2.1);
    },
  );

  // Measured 1.90 and 1.90 (were 2.07 and 2.09), random 1.72.
  it.each([['magnitude'], ['permutation']] as const)(
    'dense windows past either end, %s order: nothing lost, within 2.0 x ideal',
    (mode) => {
      const { calls, ideal } = readEach(denseWindowsPastTheData(real, 60, 77), mode);
      expect(calls / ideal).toBeLessThanOrEqual(2.0);
    },
  );
});

describe('a gateway ranking by id, which follows time within a network', () => {
  // The first answer is one network's newest events, spread over the window's last 18 days; the
  // first 13 days look quiet in it and hold 2,500 events. Measured 67 calls (65 before the quiet
  // stretch was read as such, 95 where a full answer there did not drop that reading).
  it('a 31-day window reaching 5 days before the data: nothing lost, at most 68 calls for an ideal of 41', () => {
    const w = { startMs: Date.parse('2025-05-01T00:00:00Z'), endMs: Date.parse('2025-06-01T00:00:00Z') - 1 };
    const { calls, ideal } = firstRead(real[0]!, [w], { mode: 'id-desc' }, 17);
    expect(ideal).toBe(41);
    expect(calls).toBeLessThanOrEqual(68);
  });
});

describe('a re-read on 4 lanes against the same in sequence', () => {
  // Lanes cut again each time one finished first rounded every cut's chunks up: 3.7% and 5.8% more;
  // cut once at 3 and 6% new, 2.1% and 2.5% more (1,021 and 1,074 calls where one walk took 1,000 and 1,048).
  // Cut up to 3% new, 0.7% and 1.3% more at 1 and 3% new (966 and 1,013 where 959 and 1,000).
  it.each([
    [0.01, 1.002],
    [0.03, 1],
    [0.06, 1],
  ])('with %s of the catalog new bills at most %s x the calls, 24 windows', (share, bound) => {
    const total = (lanes: number) => {
      let calls = 0;
      for (const catalog of real)
        for (const seed of [8, 15, 22]) {
          const r = reReadCost(catalog, share, lanes, { seed, shifts: [0, 4, 9, 13] });
          expect(r.lost).toBe(0);
          calls += r.calls;
        }
      return calls;
    };
    expect(total(4)).toBeLessThanOrEqual(bound * total(1));
  });
});

describe('a re-read counts the new events again and learns from the windows before it', () => {
  const total = (share: number, learn: boolean) => {
    const t = { calls: 0, recounted: 0, added: 0 };
    for (const catalog of real)
      for (const seed of [8, 15, 22]) {
        const r = reReadCost(catalog, share, 1, { seed, shifts: [0, 4, 9, 13], learn });
        expect(r.lost).toBe(0);
        t.calls += r.calls;
        t.recounted += r.recounted;
        t.added += r.added;
      }
    return t;
  };

  // Differences below a stored point (6 events in a month window) dropped, 1% new counted as 0.26%.
  it.each([0.01, 0.03, 0.06, 0.1])('counts %s of the catalog new as that share', (share) => {
    const t = total(share, true);
    expect(Math.abs(t.added / t.recounted - share)).toBeLessThan(0.002);
  });

  // Measured, learned against not: 948 / 948 calls at 0% new, 961 / 961, 988 / 987, 1,040 / 1,041, 1,096 / 1,127.
  it.each([
    [0, 1],
    [0.01, 1],
    [0.03, 1.002],
    [0.06, 1],
    [0.1, 0.98],
  ])('with %s of the catalog new bills at most %s x the calls of windows that learned nothing', (share, bound) => {
    expect(total(share, true).calls).toBeLessThanOrEqual(bound * total(share, false).calls);
  });

  // Every window starting from a share learned before and learning nothing more: the worst of a day-two read.
  it.each([
    [0, 0.2, 1.01],
    [0.03, 0.1, 1.01],
    // Measured: 596 calls where 614.
    [0.1, 0.06, 0.98],
  ])('with %s new where %s was learned before bills at most %s x nothing learned', (share, learned, bound) => {
    const calls = (l: number | null) => {
      let n = 0;
      for (const catalog of real)
        for (const seed of [8, 15, 22])
          n += reReadCost(catalog, share, 1, { seed, shifts: [0, 9], learn: false, learned: l }).calls;
      return n;
    };
    expect(calls(learned)).toBeLessThanOrEqual(bound * calls(null));
  });
});

describe('a re-read sized from stored events, both real months, in sequence and on 4 lanes', () => {
  it.each([
    [0, 1.08],
    [0.01, 1.08],
    [0.03, 1.08],
    [0.06, 1.15],
  ] as const)('with %s of the catalog new stays within %s x ideal', (share, bound) => {
    for (const catalog of real)
      for (const lanes of [1, 4]) {
        const { calls, ideal, lost } = reReadCost(catalog, share, lanes);
        expect(lost).toBe(0);
        expect(calls / ideal, `${lanes} lanes`).toBeLessThanOrEqual(bound);
      }
  });
});
