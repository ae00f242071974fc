/**
 * Re-reads sized from stored events (`reReadCost`): both real months stored, then a share of events
 * added at random times (late reports), each month's windows read again with their stored events,
 * shifted 0, 4, 9 and 13 days, 6 draws of the added events. Prints two tables:
 *
 * 1. in sequence and on 2 and 4 lanes (every call one time unit, give or take a fifth), the windows
 *    sharing what each learned of the share of new events: billed / ideal and the wait per share;
 * 2. one walk per window, each starting from a share the gateway's knowledge held before (learned by
 *    earlier reads, right or stale) and learning nothing more: the worst of a day-two read, all its
 *    windows at once, against nothing learned;
 * 3. what a planner told how the new events fall (uniformly in time, at their exact rate) would
 *    expect to pay on the same windows: the reach of sizing, beside what the planner pays.
 *   npx tsx bench/re-reads.ts
 */
import { reReadCost, shiftedMonthWindows, usgsCatalog, REAL_MONTH_FILES } from '../test/support/adversary.js';

const months = REAL_MONTH_FILES.map((f) => usgsCatalog(f).sort((a, b) => a.timeMs - b.timeMs));
const SHARES = [0, 0.01, 0.03, 0.06, 0.1];
const SEEDS = [8, 15, 22, 29, 36, 43];
const SHIFTS_DAYS = [0, 4, 9, 13];

function reRead(share: number, lanes: number, options: { learn?: boolean; learned?: number | null } = {}) {
  const t = { calls: 0, ideal: 0, wait: 0 };
  for (const catalog of months)
    for (const seed of SEEDS) {
      const r = reReadCost(catalog, share, lanes, { seed, shifts: SHIFTS_DAYS, ...options });
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

/** P(N <= k) for N ~ Poisson(mean). */
function poissonAtMost(mean: number, k: number): number {
  if (k < 0) return 0;
  let term = Math.exp(-mean);
  let sum = term;
  for (let i = 1; i <= k; i++) sum += term *= mean / i;
  return Math.min(1, sum);
}

/**
 * Expected calls of a planner that knows the stored times `t` of window [a, b] and how many new
 * events fall between two times on average (`newIn`): each chunk ends where its expected calls per event are least, a
 * chunk holding 200 or more costing one call more (the least a full answer can cost). It learns
 * nothing from answers because, new events falling independently, one chunk's count says nothing
 * of the next's.
 */
function informedCalls(t: readonly number[], [a, b]: [number, number], newIn: (x: number, y: number) => number) {
  let calls = 0;
  let [i, from] = [0, a];
  while (i < t.length) {
    let best = { perEvent: Infinity, j: i, end: from, calls: 1 };
    for (let j = i + 1; j <= Math.min(t.length, i + 199); j++) {
      const end = j < t.length ? t[j]! : b;
      const mean = newIn(from, end);
      const c = 2 - poissonAtMost(mean, 199 - (j - i));
      if (c / (j - i + mean) < best.perEvent) best = { perEvent: c / (j - i + mean), j, end, calls: c };
    }
    [calls, i, from] = [calls + best.calls, best.j, best.end];
  }
  // Past the last stored event only new ones: chunks of 190 expected.
  return from < b ? calls + Math.max(1, Math.ceil(newIn(from, b) / 190)) : calls;
}

function informed(share: number) {
  let [calls, ideal] = [0, 0];
  for (const catalog of months) {
    const span: [number, number] = [catalog[0]!.timeMs, catalog.at(-1)!.timeMs];
    const perMs = (share * catalog.length) / (span[1] - span[0]);
    const newIn = (x: number, y: number) => perMs * Math.max(0, Math.min(y, span[1]) - Math.max(x, span[0]));
    for (const { startMs, endMs } of shiftedMonthWindows(catalog, SHIFTS_DAYS)) {
      const t = catalog.map((e) => e.timeMs).filter((x) => x >= startMs && x <= endMs);
      calls += informedCalls(t, [startMs, endMs], newIn);
      ideal += Math.max(1, Math.ceil((t.length + newIn(startMs, endMs)) / 200));
    }
  }
  return calls / ideal;
}

console.log();
console.log(`| told how new events fall | ${SHARES.map((s) => `${s * 100}% new`).join(' | ')} |`);
console.log(`|---|${SHARES.map(() => '---').join('|')}|`);
console.log(`| expected billed / ideal | ${SHARES.map((s) => informed(s).toFixed(3)).join(' | ')} |`);
