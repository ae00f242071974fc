/**
 * The cases the cost bounds of docs/design.md "Cost" name, each on its own line: a first read of each
 * real month per gateway order, small windows (201 to 399 events) in every order, largest magnitude
 * first on an M2.5+ stream around an aftershock sequence, a silent cap of 100 per window, and a
 * re-read sized from stored events; how many generated windows of fewer than 400 events go over
 * ceil(n/200) + 2 calls; a silent cap of 100 on windows of 7 and 15 days. Fresh knowledge (cap
 * unknown) as on a new database.
 *   npx tsx bench/truncation-cases.ts [seeds=5] [generated windows per class=1000]
 */
import { createRng } from '@gateway-ingest/emulator';
import type { Interval } from '../src/domain/interval.js';
import {
  denseWindowsPastTheData,
  filteredWindowsPastTheData,
  freshKnowledge,
  generatedWindow,
  runWindow,
  runWindowConcurrently,
  lostIn,
  monthWindows,
  reReadCost,
  simulatedGateway,
  smallWindow,
  usgsCatalog,
  REAL_MONTH_FILES,
  type Adversary,
  type CatalogEvent,
  type Mode,
  type WindowPastTheData,
} from '../test/support/adversary.js';

const DAY = 86_400_000;
const seeds = Number(process.argv[2] ?? 5);
const inside = (c: readonly CatalogEvent[], w: Interval, m: number | null = null) =>
  c.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs && (m === null || e.magnitude >= m));

interface Tally {
  calls: number;
  ideal: number;
  lost: number;
  worst: number;
}

function run(
  c: readonly CatalogEvent[],
  windows: Interval[],
  a: Adversary,
  minMagnitude: number | null = null,
  lanes = 1,
): Tally {
  const t: Tally = { calls: 0, ideal: 0, lost: 0, worst: 0 };
  for (let seed = 1; seed <= seeds; seed++) {
    const g = simulatedGateway(c, a, seed);
    const k = freshKnowledge();
    for (const w of windows) {
      const n = inside(c, w, minMagnitude).length;
      const ideal = Math.max(1, Math.ceil(n / (a.cap ?? 200)));
      const r =
        lanes > 1
          ? runWindowConcurrently(g, w, k, { minMagnitude, lanes, seed, timed: true })
          : runWindow(g, w, k, { minMagnitude });
      t.calls += r.calls;
      t.ideal += ideal;
      t.lost += lostIn(c, w, r, minMagnitude).length + (r.failure ? 1 : 0);
      t.worst = Math.max(t.worst, r.calls - ideal);
    }
  }
  return t;
}

const line = (label: string, t: Tally, extra = '') =>
  console.log(
    `${label.padEnd(44)} ${(t.calls / t.ideal).toFixed(3)} x (calls ${t.calls}, ideal ${t.ideal}, ` +
      `worst window ideal+${t.worst}) lost ${t.lost}${extra}`,
  );

const orders: Mode[] = ['newest', 'oldest', 'random', 'magnitude', 'permutation'];
const real = REAL_MONTH_FILES.map((f) => ({
  name: f.slice(10, 31),
  catalog: usgsCatalog(f).sort((a, b) => a.timeMs - b.timeMs),
}));
for (const { name, catalog } of real)
  for (const mode of orders) {
    line(`${name} ${mode}`, run(catalog, monthWindows(catalog), { mode }));
    line(`${name} ${mode}, 4 lanes`, run(catalog, monthWindows(catalog), { mode }, null, 4));
  }

for (const padded of [false, true])
  for (const n of [201, 260, 330, 399])
    for (const mode of orders) {
      const t: Tally = { calls: 0, ideal: 0, lost: 0, worst: 0 };
      for (const { catalog } of real)
        for (let k = 0; k < 4; k++) {
          const { events, window } = smallWindow(catalog, n, padded, n * 31 + k);
          const r = run(events, [window], { mode });
          t.calls += r.calls;
          t.ideal += r.ideal;
          t.lost += r.lost;
          t.worst = Math.max(t.worst, r.worst);
        }
      line(`${n} events ${padded ? 'padded' : 'spread'} ${mode}`, t, ` (bound ideal+2)`);
    }

// Generated windows (as test/unit/truncation-cost.test.ts makes them), each in all five orders.
const generatedRuns = Number(process.argv[3] ?? 1000);
for (const [lo, hi, burst] of [
  [201, 395, 0],
  [396, 399, 0],
  [201, 260, 0.3],
  [261, 399, 0.3],
] as const) {
  const pick = createRng(lo + hi);
  const over = new Map<Mode, number>(orders.map((m) => [m, 0]));
  for (let i = 0; i < generatedRuns; i++) {
    const n = lo + Math.floor(pick() * (hi - lo + 1));
    const seed = 1 + Math.floor(pick() * 1e6);
    const { events, window } = generatedWindow(n, [1, 7, 31][i % 3]!, burst, seed);
    for (const mode of orders) {
      const r = runWindow(simulatedGateway(events, { mode }, seed), window, freshKnowledge());
      if (lostIn(events, window, r).length > 0 || r.failure) throw new Error(`${n} events, seed ${seed}, ${mode}`);
      if (r.calls > Math.ceil(n / 200) + 2) over.set(mode, over.get(mode)! + 1);
    }
  }
  const total = [...over.values()].reduce((a, b) => a + b, 0);
  const byOrder = [...over].map(([m, k]) => `${m} ${k}`).join(', ');
  console.log(
    `generated ${lo}..${hi} events, burst ${burst}: over ideal+2 in ${total} of ${generatedRuns * 5} windows (${byOrder})`,
  );
}

// Events in a row, quiet on both sides (as test/unit/truncation-cost.test.ts makes them), each order.
{
  const pick = createRng(399);
  const tally = new Map<Mode, number[]>(orders.map((m) => [m, [0, 0, 0, 0]]));
  for (let i = 0; i < generatedRuns; i++) {
    const n = 201 + Math.floor(pick() * 199);
    const seed = 1 + Math.floor(pick() * 1e6);
    const { events, window } = smallWindow(real[i % 2]!.catalog, n, true, seed);
    for (const mode of orders) {
      const r = runWindow(simulatedGateway(events, { mode }, seed), window, freshKnowledge());
      const over = Math.min(3, Math.max(0, r.calls - Math.ceil(n / 200) - 1));
      tally.get(mode)![over]!++;
    }
  }
  const byOrder = [...tally].map(([m, counts]) => `${m} ${counts.join('/')}`).join(', ');
  console.log(`201..399 events in a row, ${generatedRuns} windows each: up to ideal+1 / +2 / +3 / more: ${byOrder}`);
}

/** Each window of `windows` read on a fresh database in every order: one line per order. */
function pastTheData(label: string, windows: readonly WindowPastTheData[], overBound: boolean) {
  for (const mode of orders) {
    const t: Tally = { calls: 0, ideal: 0, lost: 0, worst: 0 };
    let over = 0;
    windows.forEach(({ catalog, window: w, minMagnitude: m, n }, i) => {
      const r = runWindow(simulatedGateway(catalog, { mode }, i + 1), w, freshKnowledge(), { minMagnitude: m });
      const ideal = Math.max(1, Math.ceil(n / 200));
      t.calls += r.calls;
      t.ideal += ideal;
      t.lost += lostIn(catalog, w, r, m).length + (r.failure ? 1 : 0);
      t.worst = Math.max(t.worst, r.calls - ideal);
      if (r.calls > ideal + 2) over++;
    });
    line(`${label}, ${mode}`, t, overBound ? `, over ideal+2 in ${over} of ${windows.length}` : '');
  }
}

const catalogs = real.map((r) => r.catalog);
// A stream's last window on a gateway whose data stops, a minimum magnitude leaving 201 to 399 events.
pastTheData("past the data's end", filteredWindowsPastTheData(catalogs, generatedRuns / 5, 4242), true);
// Dense ones reaching past either end: what reading the stretch past a first answer as quiet must not make dearer.
pastTheData("dense, past the data's ends", denseWindowsPastTheData(catalogs, 60, 77), false);

// Largest magnitude first, M2.5+, around the May aftershock sequence.
const may = real[0]!.catalog;
const m25: Interval = { startMs: Date.parse('2025-05-01T00:00:00Z'), endMs: Date.parse('2025-06-05T00:00:00Z') };
const m25w = [
  { startMs: m25.startMs, endMs: m25.startMs + 31 * DAY - 2000 },
  { startMs: m25.startMs + 31 * DAY - 2000, endMs: m25.endMs },
];
for (const mode of orders) {
  line(`M2.5+ ${mode}`, run(may, m25w, { mode }, 2.5));
  line(`M2.5+ ${mode}, 4 lanes`, run(may, m25w, { mode }, 2.5, 4));
}

// Silent cap 100: calls against 1.4 x ceil(n/100) + 3 per window.
for (const { name, catalog } of real) {
  const ws = monthWindows(catalog);
  const t = run(catalog, ws, { mode: 'newest', cap: 100 });
  const bound = 1.4 * t.ideal + 3 * ws.length * seeds;
  line(`${name} silent cap 100 newest`, t, ` (bound ${bound.toFixed(0)})`);
}

// Silent cap 100 on shorter windows, where the opening (the held first answer, two probes) weighs more.
{
  let over = 0;
  let count = 0;
  for (const { catalog } of real)
    for (let k = 0; k < 12; k++)
      for (const days of [7, 15]) {
        const startMs = catalog[0]!.timeMs + 2 * k * DAY;
        const w = { startMs, endMs: startMs + days * DAY };
        const n = inside(catalog, w).length;
        const r = runWindow(simulatedGateway(catalog, { mode: 'newest', cap: 100 }, 1), w, freshKnowledge());
        over += r.calls > 1.4 * Math.max(1, Math.ceil(n / 100)) + 3 ? 1 : 0;
        count++;
      }
  console.log(`silent cap 100 newest, windows of 7 and 15 days: over 1.4 x ceil(n/100) + 3 in ${over} of ${count}`);
}

// A refresh sized from the events stored by a first read, windows on the first read's boundaries and
// 9 days later, a share of the catalog new since, newest-first, cap known; in sequence and on 4 lanes.
for (const share of [0, 0.01, 0.03, 0.06])
  for (const lanes of [1, 4]) {
    const t: Tally = { calls: 0, ideal: 0, lost: 0, worst: 0 };
    for (const { catalog } of real) {
      const r = reReadCost(catalog, share, lanes);
      t.calls += r.calls;
      t.ideal += r.ideal;
      t.lost += r.lost;
      t.worst = Math.max(t.worst, r.worst);
    }
    line(`re-read, ${share * 100}% new, ${lanes === 1 ? 'in sequence' : `${lanes} lanes`}`, t);
  }
