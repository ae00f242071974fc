/**
 * The plan against what the backfill then bills, on a fresh database each time: `plan --sample N`
 * over a range of the bundled months, then the backfill. Prints one table row per case: the
 * windows left unmeasured, the estimate with its range, the calls billed, whether the range held
 * them, and the point estimate's error. A script, not a test: it asserts nothing.
 *   npm run bench:plan-range -- [--order newest|oldest|random|...]
 * DATABASE_URL's server and REDIS_URL are used; each case gets a database and queue prefix of its own.
 */
import { z } from 'zod';
import type { EmulatorOptions } from '@gateway-ingest/emulator';
import { earthquakeBackfill, openJourney } from '../test/support/journey.js';

const KEY = 'bench-plan-range-key-0123456789';

const RANGES: Array<{ label: string; from: string; to: string; flags: string[] }> = [
  { label: 'M1+ 2025-05-01..09-30', from: '2025-05-01', to: '2025-09-30', flags: ['--min-magnitude', '1'] },
  { label: 'M1+ 2025-08-19..09-18', from: '2025-08-19', to: '2025-09-18', flags: ['--min-magnitude', '1'] },
  { label: 'all 2025-05-06..06-05', from: '2025-05-06', to: '2025-06-05', flags: [] },
];

const planSchema = z.object({
  windows: z.number(),
  unmeasuredWindows: z.number(),
  estimatedBilledCalls: z.object({ low: z.number(), expected: z.number(), high: z.number() }).nullable(),
});

function parseOrder(argv: string[]): EmulatorOptions['order'] {
  const i = argv.indexOf('--order');
  return (i >= 0 ? argv[i + 1] : 'newest') as EmulatorOptions['order'];
}

async function measure(range: (typeof RANGES)[number], samplesPerWindow: number, order: EmulatorOptions['order']) {
  const j = await openJourney({
    serverUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    key: KEY,
    emulator: { key: KEY, seed: 1, order },
  });
  try {
    const span = ['--from', range.from, '--to', range.to, ...range.flags];
    const windows = planSchema.parse(JSON.parse((await j.run(['plan', 'earthquakes', ...span, '--json'])).stdout));
    const n = Math.max(1, Math.round(samplesPerWindow * windows.windows));
    const planned = await j.run(['plan', 'earthquakes', ...span, '--sample', String(n), '--json']);
    const plan = planSchema.parse(JSON.parse(planned.stdout));
    const step = await j.step('backfill', earthquakeBackfill(range.from, range.to, ...range.flags));
    const e = plan.estimatedBilledCalls;
    const held = e === null ? '-' : e.low <= step.billed && step.billed <= e.high ? 'yes' : '**no**';
    const error = e === null ? '-' : `${(((e.expected - step.billed) / step.billed) * 100).toFixed(0)}%`;
    const estimate = e === null ? 'none' : `${e.expected} (${e.low} to ${e.high})`;
    console.log(
      `| ${range.label} | ${order} | ${n} | ${plan.unmeasuredWindows} of ${plan.windows} | ${estimate} | ` +
        `${step.billed} | ${held} | ${error} |`,
    );
  } finally {
    await j.stop();
  }
}

async function main(): Promise<void> {
  const order = parseOrder(process.argv.slice(2));
  console.log('| range | order | --sample | unmeasured | estimated billed calls | billed | in range | error |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const range of RANGES) for (const perWindow of [0.5, 1, 2, 4]) await measure(range, perWindow, order);
}

await main();
