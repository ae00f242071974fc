/**
 * Re-reads sized from stored events (`reReadCost`): both real months stored, then a share of events
 * added at random times (late reports), each month's windows read again with their stored events,
 * shifted 0, 4, 9 and 13 days, 6 draws of the added events. Prints two tables:
 *
 * 1. in sequence and on 2 and 4 lanes (every call one time unit, give or take a fifth), the windows
 *    sharing what each learned of the share of new events: billed / ideal and the wait per share;
 * 2. one walk per window, each starting from a share the gateway's knowledge held before (learned by
 *    earlier reads, right or stale) and learning nothing more: the worst of a day-two read, all its
 *    windows at once, against nothing learned.
 *   npx tsx bench/re-reads.ts
 */
import { reReadCost, usgsCatalog, REAL_MONTH_FILES } from '../test/support/adversary.js';

const months = REAL_MONTH_FILES.map((f) => usgsCatalog(f).sort((a, b) => a.timeMs - b.timeMs));
const SHARES = [0, 0.01, 0.03, 0.06, 0.1];
const SEEDS = [8, 15, 22, 29, 36, 43];

function reRead(share: number, lanes: number, options: { learn?: boolean; learned?: number | null } = {}) {
  const t = { calls: 0, ideal: 0, wait: 0 };
  for (const catalog of months)
    for (const seed of SEEDS) {
      const r = reReadCost(catalog, share, lanes, { seed, shifts: [0, 4, 9, 13], ...options });
      if (r.lost > 0) throw new Error(`${share} new, ${lanes} lanes: lost or failed`);
      t.calls += r.calls;
      t.ideal += r.ideal;
      t.wait += r.wait;
    }
  return t;
}

console.log(`| lanes | ${SHARES.map((s) => `${s * 100}% new`).join(' | ')} |`);
console.log(`|---|${SHARES.map(() => '---').join('|')}|`);
for (const lanes of [1, 2, 4]) {
  const cells = SHARES.map((share) => {
    const t = reRead(share, lanes);
    return `${t.calls} / ${t.ideal} = ${(t.calls / t.ideal).toFixed(3)}, wait ${t.wait.toFixed(0)}`;
  });
  console.log(`| ${lanes} | ${cells.join(' | ')} |`);
}

const LEARNED = [null, 0, 0.03, 0.06, 0.1, 0.2];
console.log();
console.log(`| new \\ learned before | ${LEARNED.map((l) => (l === null ? 'nothing' : `${l * 100}%`)).join(' | ')} |`);
console.log(`|---|${LEARNED.map(() => '---').join('|')}|`);
for (const share of [0, 0.03, 0.1]) {
  const cells = LEARNED.map((learned) => {
    const t = reRead(share, 1, { learn: false, learned });
    return `${t.calls} = ${(t.calls / t.ideal).toFixed(3)}`;
  });
  console.log(`| ${share * 100}% | ${cells.join(' | ')} |`);
}
