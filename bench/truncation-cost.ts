/**
 * Billed calls per ideal call of the truncation planner against each gateway of the adversary
 * model, on both real months of the emulator's data/usgs in 31-day windows, over several seeds. Prints a table.
 *   npm run bench:truncation -- [modes,comma,separated] [seeds=3]
 */
import { dataFolder } from '@gateway-ingest/emulator';
import {
  simulatedGateway,
  runWindow,
  lostIn,
  freshKnowledge,
  usgsCatalog,
  type Adversary,
} from '../test/support/adversary.js';
const DAY = 86_400_000;
const months = [
  [`${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`, '2025-05-01T00:00:00Z', '2025-06-10T00:00:00Z'],
  [`${dataFolder}usgs/all_month_2025-08-19_2025-09-18.csv`, '2025-08-19T12:00:00Z', '2025-09-18T13:00:00Z'],
] as const;
const advs: Record<string, Adversary> = {
  newest: { mode: 'newest' },
  oldest: { mode: 'oldest' },
  random: { mode: 'random' },
  magnitude: { mode: 'magnitude' },
  mixed20: {
    mode: {
      mixed: [
        ['newest', 0.8],
        ['random', 0.2],
      ],
    },
  },
  mixed30: {
    mode: {
      mixed: [
        ['newest', 0.7],
        ['random', 0.3],
      ],
    },
  },
  mixedAll: {
    mode: {
      mixed: [
        ['newest', 0.25],
        ['oldest', 0.25],
        ['random', 0.25],
        ['magnitude', 0.25],
      ],
    },
  },
  id: { mode: 'id' },
  idDesc: { mode: 'id-desc' },
  swap: { mode: 'newest-swap' },
  depth: { mode: 'depth' },
  perm: { mode: 'permutation' },
  cap100: { mode: 'newest', cap: 100 },
  wholeSecEx: {
    mode: 'random',
    reportedUnitMs: 1000,
    startExclusive: 'sometimes',
    endExclusive: 'sometimes',
    ignoreFraction: true,
  },
};
const only = process.argv[2] || undefined;
const seeds = Number(process.argv[3] ?? 3);
for (const [name, a] of Object.entries(advs)) {
  if (only && !only.split(',').includes(name)) continue;
  let calls = 0,
    ideal = 0,
    lost = 0,
    failures = 0;
  for (const [file, from, to] of months) {
    const catalog = usgsCatalog(file);
    const FROM = Date.parse(from),
      TO = Date.parse(to);
    const windows = [] as { startMs: number; endMs: number }[];
    for (let s = FROM; s < TO; s += 31 * DAY - 2000)
      windows.push({ startMs: s, endMs: Math.min(s + 31 * DAY - 2000, TO) });
    for (let seed = 1; seed <= seeds; seed++) {
      const k = freshKnowledge();
      const g = simulatedGateway(catalog, a, seed);
      for (const w of windows) {
        const n = catalog.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs).length;
        ideal += Math.max(1, Math.ceil(n / (a.cap ?? 200)));
        const r = runWindow(g, w, k);
        calls += r.calls;
        lost += lostIn(catalog, w, r).length;
        if (r.failure) failures++;
      }
    }
  }
  console.log(
    `${name.padEnd(11)} ratio ${(calls / ideal).toFixed(3)} (calls ${calls}, ideal ${ideal}) lost ${lost} failures ${failures}`,
  );
}
