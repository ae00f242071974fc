/**
 * Backfills of filtered streams over both bundled months, as a user runs them: consecutive windows
 * of 2, 5, 7, 15 or 31 days at a minimum magnitude of 1.5 to 3.5, from 9 days before each month's
 * data to 9 days after it (so the first and last windows reach past the data), one gateway's
 * knowledge shared from window to window as the workers share it, each order on its own. Prints
 * billed / ideal over every window, and over the windows of 201 to 399 events with how many of them
 * took more than ceil(n/200) + 2 calls. Nothing lost is checked for every window.
 *   npx tsx bench/filtered-backfills.ts
 */
import {
  freshKnowledge,
  lostIn,
  runWindow,
  simulatedGateway,
  usgsCatalog,
  REAL_MONTH_FILES,
  type Mode,
} from '../test/support/adversary.js';

const DAY = 86_400_000;
const real = REAL_MONTH_FILES.map((f) => usgsCatalog(f).sort((a, b) => a.timeMs - b.timeMs));
const orders: Mode[] = ['newest', 'oldest', 'random', 'magnitude', 'permutation'];

for (const mode of orders) {
  const all = { calls: 0, ideal: 0 };
  const small = { windows: 0, calls: 0, ideal: 0, over: 0 };
  for (const c of real)
    for (const m of [1.5, 2, 2.5, 3, 3.5])
      for (const days of [2, 5, 7, 15, 31]) {
        const g = simulatedGateway(c, { mode }, 11);
        const k = freshKnowledge();
        for (let s = c[0]!.timeMs - 9 * DAY; s < c.at(-1)!.timeMs + 9 * DAY; s += days * DAY) {
          const w = { startMs: s, endMs: s + days * DAY - 1000 };
          const n = c.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs && e.magnitude >= m).length;
          const r = runWindow(g, w, k, { minMagnitude: m });
          if (lostIn(c, w, r, m).length > 0 || r.failure) throw new Error(`${mode} M${m} ${days} days: lost or failed`);
          const ideal = Math.max(1, Math.ceil(n / 200));
          all.calls += r.calls;
          all.ideal += ideal;
          if (n <= 200 || n >= 400) continue;
          small.windows++;
          small.calls += r.calls;
          small.ideal += ideal;
          if (r.calls > ideal + 2) small.over++;
        }
      }
  console.log(
    `${mode.padEnd(12)} ${(all.calls / all.ideal).toFixed(3)} x ideal (${all.calls} / ${all.ideal}); ` +
      `201 to 399 events: ${small.windows} windows, ${(small.calls / small.ideal).toFixed(3)} x, ` +
      `over ideal + 2 in ${small.over}`,
  );
}
