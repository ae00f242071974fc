/**
 * First reads at a silent cap c (the gateway answers at most c where max_results asks 200, and says
 * nothing), fresh knowledge as on a new database, against the bound 1.4 x ceil(n/c) + 3 per window:
 * - both real months in 31-day windows, 3 seeds, caps of 37 to 150 (200 for reference), five orders;
 * - windows of 7, 15 and 31 days sliding a day at a time across the start and the end of each month
 *   (reaching before or past the data, as a window ending now does), caps of 50, 100 and 150;
 * - those windows at a cap of 100 read again once what was learned lapsed (the cap last measured a hint);
 * - the weeks up to now, a window of 1, 3 or 7 days at a time back from now, one knowledge across them,
 *   against a catalog with history before its last month (May's events moved to end where August's begin).
 * The floor of any walk sized from rates at such a cap: `npx tsx bench/truncation-floor.ts flat --cap=N`.
 *   npx tsx bench/silent-caps.ts
 */
import type { Interval } from '../src/domain/interval.js';
import {
  freshKnowledge,
  lostIn,
  monthWindows,
  runWindow,
  simulatedGateway,
  usgsCatalog,
  withHistory,
  REAL_MONTH_FILES,
  type CatalogEvent,
  type Mode,
  type SharedKnowledge,
} from '../test/support/adversary.js';

const DAY = 86_400_000;
const ORDERS: Mode[] = ['newest', 'oldest', 'random', 'magnitude', 'permutation'];
const months = REAL_MONTH_FILES.map((f) => usgsCatalog(f).sort((a, b) => a.timeMs - b.timeMs));

interface Tally {
  calls: number;
  ideal: number;
  probes: number;
  over: number;
  windows: number;
}

interface ReadOptions {
  /** One knowledge for all the windows (as a worker shares it), or a fresh one per window by default. */
  knowledge?: () => SharedKnowledge;
  minMagnitude?: number | null;
  nowMs?: number;
}

function read(
  catalog: readonly CatalogEvent[],
  windows: Interval[],
  mode: Mode,
  cap: number,
  seed: number,
  t: Tally,
  { knowledge = freshKnowledge, minMagnitude = null, nowMs }: ReadOptions = {},
) {
  const matched = catalog.filter((e) => minMagnitude === null || e.magnitude >= minMagnitude);
  for (const w of windows) {
    const n = matched.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs).length;
    if (n === 0) continue;
    const r = runWindow(simulatedGateway(catalog, { mode, cap }, seed), w, knowledge(), { minMagnitude, nowMs });
    if (r.failure || lostIn(catalog, w, r, minMagnitude).length > 0)
      throw new Error(`cap ${cap} ${mode}: lost or failed`);
    const ideal = Math.max(1, Math.ceil(n / cap));
    t.calls += r.calls;
    t.ideal += ideal;
    t.probes += r.probes;
    t.over += r.calls > 1.4 * ideal + 3 ? 1 : 0;
    t.windows++;
  }
}

const row = (label: string, t: Tally) =>
  `| ${label} | ${t.calls} / ${t.ideal} = ${(t.calls / t.ideal).toFixed(3)} | ${t.probes} | ${t.over} of ${t.windows} |`;

console.log('| months in 31-day windows, 3 seeds | billed / ceil(n/c) | probes | over 1.4 x ceil(n/c) + 3 |');
console.log('|---|---|---|---|');
for (const cap of [37, 50, 100, 150, 200])
  for (const mode of ORDERS) {
    const t: Tally = { calls: 0, ideal: 0, probes: 0, over: 0, windows: 0 };
    for (const catalog of months)
      for (const seed of [1, 2, 3]) read(catalog, monthWindows(catalog), mode, cap, seed, t);
    console.log(row(`cap ${cap}, ${mode}`, t));
  }

/** Windows of 7, 15 and 31 days reaching up to 8 days before the catalog's first event or past its last. */
function acrossEnds(catalog: readonly CatalogEvent[]): Interval[] {
  const first = catalog[0]!.timeMs;
  const last = catalog.at(-1)!.timeMs;
  return [7, 15, 31].flatMap((days) =>
    Array.from({ length: 17 }, (_, i) => i - 8).flatMap((k) => [
      { startMs: first + k * DAY, endMs: first + (k + days) * DAY },
      { startMs: last + (k - days) * DAY, endMs: last + k * DAY },
    ]),
  );
}

console.log("\n| windows across the months' ends | billed / ceil(n/c) | probes | over 1.4 x ceil(n/c) + 3 |");
console.log('|---|---|---|---|');
for (const cap of [50, 100, 150])
  for (const mode of ORDERS.slice(0, 4)) {
    const t: Tally = { calls: 0, ideal: 0, probes: 0, over: 0, windows: 0 };
    for (const catalog of months) read(catalog, acrossEnds(catalog), mode, cap, 1, t);
    console.log(row(`cap ${cap}, ${mode}`, t));
  }

// The same windows read again once what was learned lapsed: the cap last measured is kept as a hint,
// the region of the largest answer (the other month) is where a probe asks first.
const both = [...months[0]!, ...months[1]!].sort((a, b) => a.timeMs - b.timeMs);
console.log('\n| the same, what was learned lapsed | billed / ceil(n/c) | probes | over 1.4 x ceil(n/c) + 3 |');
console.log('|---|---|---|---|');
for (const mode of ORDERS.slice(0, 4)) {
  const t: Tally = { calls: 0, ideal: 0, probes: 0, over: 0, windows: 0 };
  for (const [i, catalog] of months.entries()) {
    const other = months[1 - i]!;
    const capRegion = { lo: other[0]!.timeMs, hi: other[0]!.timeMs + 20 * DAY };
    const lapsed = () => ({ ...freshKnowledge(), measuredBefore: 100, capRegion });
    read(both, acrossEnds(catalog), mode, 100, 1, t, { knowledge: lapsed });
  }
  console.log(row(`cap 100, ${mode}`, t));
}

// The weeks up to now: no probe place may reach past now, where nothing is yet; the first window's
// probes measure the cap for the windows after it.
const history = withHistory(months[0]!, months[1]!);
const nowMs = history.at(-1)!.timeMs + 1000;
console.log(
  '\n| the weeks up to now, 4 windows back from now | billed / ceil(n/c) | probes | over 1.4 x ceil(n/c) + 3 |',
);
console.log('|---|---|---|---|');
for (const cap of [100, 150])
  for (const mode of ORDERS.slice(0, 4)) {
    const t: Tally = { calls: 0, ideal: 0, probes: 0, over: 0, windows: 0 };
    for (const minMagnitude of [null, 1.5, 2.5])
      for (const days of [1, 3, 7]) {
        const k = freshKnowledge();
        const windows = [0, 1, 2, 3].map((i) => ({
          startMs: nowMs - (i + 1) * days * DAY,
          endMs: nowMs - i * days * DAY,
        }));
        read(history, windows, mode, cap, 1, t, { knowledge: () => k, minMagnitude, nowMs });
      }
    console.log(row(`cap ${cap}, ${mode}`, t));
  }
