import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledDataPaths, startEmulator, type EventOrder, type RunningEmulator } from '@gateway-ingest/emulator';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { createTestDatabase, redisUrl, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';
import { spawnCli } from '../support/run-cli.js';
import { jobsDir } from '../support/service.js';

/**
 * The promise of the dry run: `backfill --dry-run` estimates the demo's billed calls within 20% before
 * it runs. Density is stored by backfilling the demo's earthquake ranges for the unfiltered stream;
 * then the demo's ranges are planned for another stream (a minimum magnitude: counted from the
 * wider stream's events) together with the demo's indicators, and the real run's billed calls,
 * as the emulator's call log has them, are compared with the estimate.
 */
const KEY = 'plan-estimate-key-0123456789';
const DEMO_RANGES = [
  { from: '2023-03-31T00:00:00Z', to: '2023-04-08T00:00:00Z' },
  { from: '2025-05-01T00:00:00Z', to: '2025-09-30T00:00:00Z' },
];
const DEMO_INDICATORS = [
  '--indicator',
  'NY.GDP.MKTP.CD,SP.POP.TOTL,SP.DYN.IMRT.IN',
  '--country',
  'USA,CHN,WLD,DEU,IND',
  '--from-year',
  '1960',
];
const MIN_MAGNITUDE = '1';

interface DryRun {
  windows: number;
  windowsCovered: number;
  estimatedBilledCalls: { low: number; expected: number; high: number } | null;
  estimatedUnits: { low: number; expected: number; high: number; unit: string } | null;
  estimatedSeconds: number | null;
  density: { windows: Record<string, number> } | null;
  orderFactor: { expected: number; measuredWindows: number } | null;
  capProbe: string;
}

async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  const p = spawnCli(args, env);
  const { code } = await p.exited;
  return { code, out: p.stdout(), err: p.stderr() };
}

async function dryRun(args: string[], env: Record<string, string>): Promise<DryRun> {
  const r = await cli([...args, '--dry-run', '--json'], env);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as DryRun;
}

const billedCalls = (e: RunningEmulator) => e.calls.filter((c) => c.billed).length;

/** A database and an emulator of the bundled data of their own, and the CLI's environment for them. */
async function startFresh(
  order: EventOrder,
  seed: number,
): Promise<{ db: TestDatabase; emulator: RunningEmulator; env: Record<string, string> }> {
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: KEY, ...bundledDataPaths(), order, seed });
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: `${redisUrl()}/0`,
    GATEWAY_BASE_URL: emulator.url,
    MARKET_KEY: KEY,
    QUEUE_PREFIX: uniquePrefix(),
    LOG_LEVEL: 'warn',
    RETRY_BASE_DELAY_MS: '20',
  };
  return { db, emulator, env };
}

async function stopFresh(db: TestDatabase, emulator: RunningEmulator): Promise<void> {
  await emulator.close();
  await db.drop();
}

describe.each(['newest', 'random'] as const)('plan before paying, gateway order %s', (order: EventOrder) => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ db, emulator, env } = await startFresh(order, 7));
    // Part of the bundled data: the demo's earthquake ranges, unfiltered, so density is stored.
    const pipeline = startPipeline(db, emulator, KEY);
    try {
      const refs = [];
      for (const r of DEMO_RANGES) {
        refs.push(
          await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
            filters: { minMagnitude: null, circle: null },
            fromMs: Date.parse(r.from),
            toMs: Date.parse(r.to),
            refresh: false,
          }),
        );
      }
      expect(await pipeline.run(refs)).toMatchObject({ failed: 0 });
    } finally {
      await pipeline.close();
    }
  });

  afterAll(() => stopFresh(db, emulator));

  it('extrapolates a range nothing covers from the density stored elsewhere, with a wide range', async () => {
    const plan = await dryRun(['backfill', 'earthquakes', '--from', '2024-01-01', '--to', '2024-03-01'], env);
    expect(plan).toMatchObject({
      windows: 2,
      windowsCovered: 0,
      density: { windows: { extrapolated: 2, unknown: 0 } },
    });
    expect(plan.estimatedBilledCalls!.low).toBeLessThan(plan.estimatedBilledCalls!.expected);
    expect(plan.estimatedBilledCalls!.high).toBeGreaterThan(plan.estimatedBilledCalls!.expected);
  });

  it('windows already ingested count as covered, and cost nothing', async () => {
    const plan = await dryRun(
      ['backfill', 'earthquakes', '--from', DEMO_RANGES[0]!.from, '--to', DEMO_RANGES[0]!.to],
      env,
    );
    expect(plan).toMatchObject({ windows: 0, windowsCovered: 1 });
    expect(plan.estimatedBilledCalls).toEqual({ low: 0, expected: 0, high: 0 });
  });

  it(`estimates the demo's billed calls within 20% before they are paid for`, async () => {
    const calls = emulator.calls.length;
    const partitions = async () =>
      (await db.db.execute<{ n: number }>(sql`select count(*)::int as n from ingest_partitions`)).rows[0]!.n;
    const before = await partitions();

    const quakeArgs = DEMO_RANGES.map((r) => [
      'backfill',
      'earthquakes',
      '--from',
      r.from,
      '--to',
      r.to,
      '--min-magnitude',
      MIN_MAGNITUDE,
    ]);
    const quakePlans = await Promise.all(quakeArgs.map((a) => dryRun(a, env)));
    const indicatorPlan = await dryRun(['backfill', 'indicators', ...DEMO_INDICATORS], env);
    // Planning called nothing and enqueued nothing.
    expect(emulator.calls.length).toBe(calls);
    expect(await partitions()).toBe(before);
    for (const p of quakePlans) {
      expect(p.density!.windows.unknown).toBe(0);
      expect(p.density!.windows.exact).toBe(p.windows);
      expect(p.capProbe).toBe('none');
    }
    expect(indicatorPlan).toMatchObject({
      windows: 15,
      estimatedBilledCalls: { low: 15, expected: 15, high: 15 },
      estimatedUnits: { unit: 'points' },
    });

    const quakeEstimate = quakePlans.reduce((n, p) => n + p.estimatedBilledCalls!.expected, 0);
    const estimate = quakeEstimate + indicatorPlan.estimatedBilledCalls!.expected;

    const billedBefore = billedCalls(emulator);
    for (const args of [...quakeArgs, ['backfill', 'indicators', ...DEMO_INDICATORS]]) {
      const r = await cli([...args, '--inline'], env);
      expect(r.code, r.err).toBe(0);
    }
    const quakeActual = emulator.calls.slice(calls).filter((c) => c.billed && c.operation === 'earthquake').length;
    const actual = billedCalls(emulator) - billedBefore;
    const error = Math.abs(estimate - actual) / actual;
    const quakeError = Math.abs(quakeEstimate - quakeActual) / quakeActual;
    process.stdout.write(
      `order ${order}: estimated ${estimate} billed calls (earthquake ${quakeEstimate}, order factor ${quakePlans[1]!.orderFactor!.expected.toFixed(2)}), ` +
        `billed ${actual} (earthquake ${quakeActual}): error ${(100 * error).toFixed(1)}% (earthquake ${(100 * quakeError).toFixed(1)}%)\n`,
    );
    expect(quakeError).toBeLessThanOrEqual(0.2);
    expect(error).toBeLessThanOrEqual(0.2);
    for (const p of quakePlans) {
      expect(p.estimatedBilledCalls!.low).toBeLessThanOrEqual(p.estimatedBilledCalls!.expected);
      expect(p.estimatedBilledCalls!.high).toBeGreaterThanOrEqual(p.estimatedBilledCalls!.expected);
    }
    expect(quakeActual).toBeGreaterThanOrEqual(quakePlans.reduce((n, p) => n + p.estimatedBilledCalls!.low, 0));
    expect(quakeActual).toBeLessThanOrEqual(quakePlans.reduce((n, p) => n + p.estimatedBilledCalls!.high, 0));
  });
});

describe('--sample and the confirmation', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;

  beforeAll(async () => {
    ({ db, emulator, env } = await startFresh('newest', 7));
  });

  afterAll(() => stopFresh(db, emulator));

  const month = ['--from', '2025-05-06T00:00:00Z', '--to', '2025-06-05T00:00:00Z'];

  it('with nothing stored, says no density is known and gives only the window count', async () => {
    const plan = await dryRun(['backfill', 'earthquakes', ...month], env);
    expect(plan).toMatchObject({
      windows: 1,
      windowsCovered: 0,
      estimatedBilledCalls: null,
      estimatedUnits: null,
      estimatedSeconds: null,
    });
    const text = await cli(['plan', 'earthquakes', ...month], env);
    expect(text.out).toMatch(/no event density is known.*at least 1 /);
    expect(text.out).toMatch(/--sample N/);
  });

  it('pays for exactly N audited sample calls and estimates from them; a later plan reads them back without paying', async () => {
    const before = emulator.calls.length;
    const plan = await dryRun(['backfill', 'earthquakes', ...month, '--sample', '4'], env);
    expect(emulator.calls.length - before).toBe(4);
    const audited = await db.db.execute<{ n: number; billed: number }>(
      sql`select count(*)::int as n, count(*) filter (where billed)::int as billed from gateway_executions where call_purpose = 'sample'`,
    );
    expect(audited.rows[0]).toEqual({ n: 4, billed: 4 });
    expect(plan.estimatedBilledCalls).not.toBeNull();
    expect(plan.density!.windows.unknown).toBe(0);

    const again = await dryRun(['backfill', 'earthquakes', ...month], env);
    expect(emulator.calls.length - before).toBe(4);
    expect(again.estimatedBilledCalls).toEqual(plan.estimatedBilledCalls);
    // The density once measured, more samples are not paid for.
    const skipped = await dryRun(['backfill', 'earthquakes', ...month, '--sample', '3'], env);
    expect(emulator.calls.length - before).toBe(4);
    expect(skipped).toMatchObject({ sample: { skipped: true } });

    // The sampled estimate against the real run.
    const billedBefore = billedCalls(emulator);
    const r = await cli(['backfill', 'earthquakes', ...month, '--inline'], env);
    expect(r.code, r.err).toBe(0);
    const actual = billedCalls(emulator) - billedBefore;
    process.stdout.write(
      `sampled (4 calls): estimated ${plan.estimatedBilledCalls!.expected} (${plan.estimatedBilledCalls!.low}-${plan.estimatedBilledCalls!.high}), billed ${actual}\n`,
    );
    expect(actual).toBeGreaterThanOrEqual(plan.estimatedBilledCalls!.low);
    expect(actual).toBeLessThanOrEqual(plan.estimatedBilledCalls!.high);
  });

  it('plan --stream plans a jobs.yaml stream from its backfill_from', async () => {
    const jobs = jobsDir();
    try {
      jobs.write(
        'earthquakes:\n  - name: quakes\n    min_magnitude: 4\n    every: 10m\n    backfill_from: 2025-05-06\n',
      );
      const r = await cli(['plan', '--stream', 'quakes', '--config', jobs.path, '--json'], env);
      expect(r.code, r.err).toBe(0);
      const plan = JSON.parse(r.out) as DryRun & { streams: Array<{ streamKey: string }> };
      expect(plan.streams).toEqual([expect.objectContaining({ streamKey: 'earthquake:m4' })]);
      expect(plan.windows).toBeGreaterThan(1);
      const missing = await cli(['plan', '--stream', 'nope', '--config', jobs.path], env);
      expect(missing.code).toBe(2);
      expect(missing.err).toMatch(/--stream: "nope" is not declared/);
    } finally {
      jobs.remove();
    }
  });

  it('above CONFIRM_BILLED_CALLS without a TTY refuses (exit 2, nothing enqueued) unless --yes', async () => {
    const args = [
      'backfill',
      'earthquakes',
      '--from',
      '2025-05-06T00:00:00Z',
      '--to',
      '2025-06-05T00:00:00Z',
      '--min-magnitude',
      '2',
    ];
    const refused = await cli(args, { ...env, CONFIRM_BILLED_CALLS: '1' });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/above CONFIRM_BILLED_CALLS=1: nothing enqueued; pass --yes/);
    const partitions = await db.db.execute<{ n: number }>(
      sql`select count(*)::int as n from ingest_partitions where stream_key = 'earthquake:m2'`,
    );
    expect(partitions.rows[0]!.n).toBe(0);
    const yes = await cli([...args, '--yes'], { ...env, CONFIRM_BILLED_CALLS: '1' });
    expect(yes.code, yes.err).toBe(0);
    expect(yes.out).toMatch(/earthquake:m2: 1 partitions planned, 1 jobs enqueued/);
  });
});

/**
 * Nothing stored: the estimate comes from `--sample` alone, over a month the bundled catalog holds
 * whole. One sample leaves the window unmeasured and the plan says so; a few more measure it, and
 * the backfill then bills within the range, near the point estimate.
 */
describe('a plan sampled on a fresh database contains the backfill', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;
  const range = ['--from', '2025-08-19T00:00:00Z', '--to', '2025-09-18T00:00:00Z', '--min-magnitude', '1'];

  beforeAll(async () => {
    ({ db, emulator, env } = await startFresh('random', 11));
  });

  afterAll(() => stopFresh(db, emulator));

  it('says a window one full sample left unmeasured; measured, it bills within the range', async () => {
    const few = await cli(['plan', 'earthquakes', ...range, '--sample', '1'], env);
    expect(few.code, few.err).toBe(0);
    expect(few.out).toMatch(/1 of 1 window unmeasured: .*--sample 2 measures most/);

    const plan = (await dryRun(['backfill', 'earthquakes', ...range, '--sample', '4'], env)) as DryRun & {
      unmeasuredWindows: number;
    };
    expect(plan.unmeasuredWindows).toBe(0);
    const billedBefore = billedCalls(emulator);
    const r = await cli(['backfill', 'earthquakes', ...range, '--inline', '--yes'], env);
    expect(r.code, r.err).toBe(0);
    const actual = billedCalls(emulator) - billedBefore;
    const e = plan.estimatedBilledCalls!;
    process.stdout.write(`sampled fresh month: estimated ${e.expected} (${e.low}-${e.high}), billed ${actual}\n`);
    expect(actual).toBeGreaterThanOrEqual(e.low);
    expect(actual).toBeLessThanOrEqual(e.high);
    expect(e.expected / actual).toBeGreaterThan(1 / 1.5);
    expect(e.expected / actual).toBeLessThan(1.5);
  });
});
