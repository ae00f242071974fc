/**
 * First reads of both real months from a gateway reporting times coarser than it filters on (to the
 * millisecond, the minute, the hour, the day), each order, on a fresh database's knowledge: billed /
 * ideal, events missing from windows that finished, and windows that failed (and said so). `hard` adds both ends exclusive, fractions ignored and a
 * silent cap of 150. Then the generated windows of `test/unit/truncation.test.ts` ("times reported
 * to units": clusters of five seconds, caps down to 37, every keep-order) at each unit: how many
 * fail at their call ceiling (each saying so), and the calls of all of them.
 *   npx tsx bench/coarse-times.ts [seeds=8] [hard] [generated windows=1000]
 */
import fc from 'fast-check';
import {
  knownCap,
  freshKnowledge,
  lostIn,
  monthWindows,
  runWindow,
  simulatedGateway,
  usgsCatalog,
  REAL_MONTH_FILES,
  type Adversary,
  type Mode,
} from '../test/support/adversary.js';
import { adversaries, catalogs } from '../test/support/generated.js';

const seeds = Number(process.argv[2] ?? 8);
const hard = process.argv[3] === 'hard';
const generated = Number(process.argv[4] ?? 1000);
const UNITS: Record<string, number> = { ms: 1, minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const ORDERS: Mode[] = ['newest', 'oldest', 'random', 'magnitude', 'permutation'];
const cap = hard ? 150 : 200;
const gateway = (mode: Mode, unitMs: number): Adversary => ({
  mode,
  reportedUnitMs: unitMs,
  ...(hard ? { startExclusive: true, endExclusive: true, ignoreFraction: true, cap } : {}),
});

console.log(
  `${hard ? 'hard gateway (both ends exclusive, fractions ignored, silent cap 150)' : 'plain gateway'}, ${seeds} seeds`,
);
for (const file of REAL_MONTH_FILES) {
  const catalog = usgsCatalog(file).sort((a, b) => a.timeMs - b.timeMs);
  for (const mode of ORDERS)
    for (const [unit, unitMs] of Object.entries(UNITS)) {
      let [calls, ideal, lost, failed] = [0, 0, 0, 0];
      for (let seed = 1; seed <= seeds; seed++) {
        const g = simulatedGateway(catalog, gateway(mode, unitMs), seed);
        const k = freshKnowledge();
        for (const w of monthWindows(catalog)) {
          const n = catalog.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs).length;
          ideal += Math.max(1, Math.ceil(n / cap));
          const r = runWindow(g, w, k);
          calls += r.calls;
          // A failed window says so: only a window that finished without an event is a loss.
          if (r.failure === null) lost += lostIn(catalog, w, r).length;
          else failed++;
        }
      }
      const label = `${file.slice(10, 31)} ${mode} ${unit}`.padEnd(44);
      console.log(
        `${label} ${(calls / ideal).toFixed(3)} x (calls ${calls}, ideal ${ideal}) lost ${lost} failed ${failed}`,
      );
    }
}

const drawn = fc.sample(fc.tuple(catalogs, adversaries, fc.integer({ min: 1, max: 1e6 })), {
  numRuns: generated,
  seed: 42,
});
for (const unitMs of [10_000, 60_000, 3_600_000, 86_400_000]) {
  let [failed, lost, calls] = [0, 0, 0];
  for (const [{ window, events }, a, seed] of drawn) {
    const r = runWindow(simulatedGateway(events, { ...a, reportedUnitMs: unitMs }, seed), window, knownCap(a.cap));
    calls += r.calls;
    if (r.failure === null) lost += lostIn(events, window, r).length;
    else failed++;
  }
  console.log(
    `generated windows, times to ${unitMs} ms: failed ${failed} of ${generated}, lost ${lost}, calls ${calls}`,
  );
}
