/**
 * How close any walk sized from event rates can come to the ideal on the real months, against a
 * newest-first gateway, with everything in its favour: the exact times of every event above the
 * walk, a whole-window opening already paid, a chunk after a full answer asked with 199 events.
 * For each way of measuring the rate (the last L events) and each target fill, the whole month is
 * walked once; the best pair is printed. It bounds what better sizing can win, not the planner.
 * The same walk over as many events at uniformly random times in the same span (no clusters, no
 * daily rhythm) shows what the clustering of real earthquakes costs.
 *   npx tsx bench/truncation-floor.ts
 */
import { readFileSync } from 'node:fs';
import { dataFolder, loadUsgsCsv } from '@gateway-ingest/emulator';

const CAP = 200;
const files = ['all_month_2025-05-06_2025-06-05.csv', 'all_month_2025-08-19_2025-09-18.csv'];

/**
 * Billed calls of one walk down `times` (newest first): each chunk sized for `fill` events at the
 * rate of the last `last` events.
 */
function walk(times: readonly number[], last: number, fill: number): number {
  let calls = 2; // the opening full answer and the chunk it sized, 199 events
  let known = CAP - 1;
  while (known < times.length) {
    const edge = (times[known - 1]! + times[known]!) / 2;
    const from = Math.max(0, known - last);
    const rate = (known - from) / (times[from]! - edge);
    const reach = edge - fill / rate;
    let n = 0;
    while (known + n < times.length && times[known + n]! > reach) n++;
    calls++;
    if (n < CAP) known += n;
    else {
      calls++;
      known += CAP - 1;
    }
  }
  return calls;
}

/** A small seeded generator, so that the figures repeat. */
function uniformTimes(n: number, lo: number, hi: number): number[] {
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return Array.from({ length: n }, () => lo + next() * (hi - lo)).sort((a, b) => b - a);
}

function report(label: string, times: readonly number[]): void {
  const ideal = Math.ceil(times.length / CAP);
  let best = { calls: Infinity, last: 0, fill: 0 };
  for (const last of [50, 100, 200, 400, 800, 1600])
    for (let fill = 120; fill <= 195; fill += 5) {
      const calls = walk(times, last, fill);
      if (calls < best.calls) best = { calls, last, fill };
    }
  const ratio = (best.calls / ideal).toFixed(3);
  console.log(
    `${label}: ${times.length} events, ideal ${ideal}, best ${best.calls} calls = ${ratio} x ` +
      `(rate of the last ${best.last} events, chunks sized for ${best.fill})`,
  );
}

for (const file of files) {
  const times = loadUsgsCsv(readFileSync(`${dataFolder}usgs/${file}`, 'utf8'))
    .map((e) => Date.parse(e.time))
    .sort((a, b) => b - a);
  report(file, times);
  report(`${file} at uniform times`, uniformTimes(times.length, times.at(-1)!, times[0]!));
}
