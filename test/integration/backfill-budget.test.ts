import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abandonAttempt, beginAttempt } from '../../src/db/audit.js';
import { releaseBudget } from '../../src/db/budget.js';
import { budgetCounters, gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { backfillHalt } from '../../src/ingest/backfills.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { waitForPartitions } from '../../src/ingest/wait.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { utcDayOf, type BudgetScope } from '../../src/domain/budget.js';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { ensureStopped, spawnCli, type CliProcess } from '../support/run-cli.js';
import { redisUrlWithDb } from '../support/service.js';

const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-budget-0123456789';
const FROM = '2025-05-01T00:00:00Z';
const TO = '2025-06-10T00:00:00Z';
const NOW = () => new Date('2025-07-01T00:00:00Z');
const NO_FILTERS = { minMagnitude: null, circle: null };

let catalog: EarthquakeEvent[];

beforeAll(async () => {
  catalog = await loadUsgsFile(MONTH);
});

const billedByGateway = (e: RunningEmulator) => e.calls.filter((c) => c.billed).length;

async function billedInAudit(db: TestDatabase): Promise<number> {
  const [row] = await db.db
    .select({ n: sql<number>`count(*)::int` })
    .from(gatewayExecutions)
    .where(eq(gatewayExecutions.billed, true));
  return row!.n;
}

describe('budget counters', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  const used = async (scope: string, day?: string) =>
    (
      await db.db
        .select({ calls: budgetCounters.calls })
        .from(budgetCounters)
        .where(
          day === undefined
            ? eq(budgetCounters.scope, scope)
            : and(eq(budgetCounters.scope, scope), eq(budgetCounters.day, day)),
        )
    )[0]?.calls ?? 0;

  const audited = async () => (await db.db.select({ n: sql<number>`count(*)::int` }).from(gatewayExecutions))[0]!.n;
  const call = {
    streamKey: 'earthquake:all',
    partitionKey: '2025-06-01',
    jobId: 'job-1',
    attempt: 2,
    purpose: 'window',
    backfillId: 'bf-1',
  };
  const begin = (scopes: BudgetScope[]) =>
    beginAttempt(
      db.db,
      scopes,
      'earthquake',
      { start_time: '2025-06-01T00:00:00Z' },
      call,
      new Date('2025-06-01T12:00:00Z'),
    );

  it('concurrent attempts never go past a cap, and every audited attempt holds a unit', async () => {
    const scopes = [{ scope: 'backfill:race', day: '1970-01-01', cap: 20 }];
    const results = await Promise.all(Array.from({ length: 60 }, () => begin(scopes)));
    expect(results.filter((r) => r.refused === null)).toHaveLength(20);
    expect(await used('backfill:race')).toBe(20);
    expect(await audited()).toBe(20);
    const begun = results.find((r) => r.attemptId !== null)!;
    const [row] = await db.db.select().from(gatewayExecutions).where(eq(gatewayExecutions.id, begun.attemptId!));
    expect(row).toMatchObject({
      operation: 'earthquake',
      streamKey: call.streamKey,
      partitionKey: call.partitionKey,
      jobId: call.jobId,
      attempt: call.attempt,
      callPurpose: call.purpose,
      backfillId: call.backfillId,
      request: { start_time: '2025-06-01T00:00:00Z' },
      billed: null,
      finishedAt: null,
      startedAt: new Date('2025-06-01T12:00:00Z'),
    });
  });

  it('a scope refused writes no audit row and gives back the others of the same call; a released unit can be reserved again', async () => {
    const day = { scope: 'day', day: '2025-06-01', cap: 100 };
    const full = { scope: 'backfill:race', day: '1970-01-01', cap: 20 };
    expect(await begin([day, full])).toMatchObject({ attemptId: null, refused: full });
    expect(await used('day')).toBe(0);
    expect(await audited()).toBe(20);
    await releaseBudget(db.db, [full]);
    expect(await used('backfill:race')).toBe(19);
    expect((await begin([day, full])).refused).toBeNull();
    expect([await used('day'), await used('backfill:race'), await audited()]).toEqual([1, 20, 21]);
    // Uncapped scopes are only counted.
    expect((await begin([{ scope: 'backfill:free', day: '1970-01-01', cap: null }])).refused).toBeNull();
    // A cap below 1 refuses even a first call, and nothing is written.
    const zero = { scope: 'backfill:zero', day: '1970-01-01', cap: 0 };
    expect(await begin([day, zero])).toMatchObject({ attemptId: null, refused: zero });
    expect([await used('day'), await used('backfill:zero'), await audited()]).toEqual([1, 0, 22]);
  });

  it('an attempt whose beginning lost its answer is ended as never sent, its units given back', async () => {
    const day = { scope: 'day', day: '2025-06-02', cap: null };
    const startedAt = new Date('2025-06-02T08:00:00.123Z');
    const own = { ...call, partitionKey: '2025-06-02', attempt: 7 };
    const begun = await beginAttempt(db.db, [day], 'earthquake', { start_time: 'x' }, own, startedAt);
    expect(await used('day', '2025-06-02')).toBe(1);
    await abandonAttempt(db.db, own, startedAt, [day]);
    const [row] = await db.db.select().from(gatewayExecutions).where(eq(gatewayExecutions.id, begun.attemptId!));
    expect(row).toMatchObject({ billed: false, errorKind: 'transport', httpStatus: null });
    expect(row!.finishedAt).not.toBeNull();
    expect(await used('day', '2025-06-02')).toBe(0);
    // Nothing there to end (the statement never committed): nothing changes.
    await abandonAttempt(db.db, { ...own, attempt: 8 }, startedAt, [day]);
    expect(await used('day', '2025-06-02')).toBe(0);
  });
});

describe('BILLED_CALLS_PER_DAY, shared by every worker', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let a: Pipeline;
  let b: Pipeline;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'newest',
      seed: 7,
      now: NOW,
    });
    a = startPipeline(db, emulator, KEY, { billedCallsPerDay: 10, budgetRecheckMs: 200 });
    // A second worker on the same queues, with its own connections: another process in all but name.
    b = startPipeline(db, emulator, KEY, {
      billedCallsPerDay: 10,
      budgetRecheckMs: 200,
      prefix: a.queues.earthquake.opts.prefix as string,
    });
  });

  afterAll(async () => {
    await b.close();
    await a.close();
    await emulator.close();
    await db.drop();
  });

  it('no worker starts a call past the cap; the work waits for the next UTC day, nothing failed', async () => {
    const summary = await enqueueEarthquakeBackfill(db.db, a.queues.earthquake, {
      filters: NO_FILTERS,
      fromMs: Date.parse(FROM),
      toMs: Date.parse(TO),
      refresh: false,
    });
    // No backfill id: a scheduled run, held by the day budget alone. The wait ends when both workers are held.
    const queues = { earthquake: a.queues.earthquake, indicator: a.queues.indicator };
    const halted = await waitForPartitions(db.db, [summary], () => undefined, {
      pollMs: 100,
      halt: async () => {
        const day =
          (
            await db.db
              .select({ calls: budgetCounters.calls })
              .from(budgetCounters)
              .where(and(eq(budgetCounters.scope, 'day'), eq(budgetCounters.day, utcDayOf(Date.now()))))
          )[0]?.calls ?? 0;
        const active = await queues.earthquake.getJobCounts('active');
        return day >= 10 && active.active === 0
          ? { kind: 'budget', scope: 'day', used: day, cap: 10, untilMs: 0 }
          : null;
      },
    });
    expect(halted.halt).toMatchObject({ kind: 'budget', scope: 'day', used: 10 });
    expect(billedByGateway(emulator)).toBe(10);
    expect(await billedInAudit(db)).toBe(10);
    // Every audited call holds a unit or gave it back unbilled: the counter is exactly what was billed.
    expect(emulator.calls).toHaveLength((await db.db.select().from(gatewayExecutions)).length);
    const states = await db.db
      .select({ state: ingestPartitions.state, kind: ingestPartitions.lastErrorKind })
      .from(ingestPartitions);
    expect(states.every((s) => s.state !== 'failed')).toBe(true);
    const held = Object.values(await a.queues.earthquake.getJobCounts('delayed', 'waiting', 'active')).reduce(
      (n, k) => n + k,
      0,
    );
    expect(held).toBe(2);
  });
});

describe('--max-billed-calls across two worker processes', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;
  const workers: CliProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'newest',
      seed: 42,
      now: NOW,
    });
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: redisUrlWithDb(),
      GATEWAY_BASE_URL: emulator.url,
      MARKET_KEY: KEY,
      QUEUE_PREFIX: uniquePrefix(),
      // One window per process at a time: each of the two windows runs in its own process.
      WORKER_CONCURRENCY: '1',
      RETRY_BASE_DELAY_MS: '20',
      LOG_LEVEL: 'info',
    };
    for (let i = 0; i < 2; i++) workers.push(spawnCli(['worker'], env));
    await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'workers started')));
  });

  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => ensureStopped(w)));
    await emulator.close();
    await db.drop();
  });

  const cli = async (args: string[]) => {
    const p = spawnCli(args, env);
    const { code } = await p.exited;
    return { code, out: p.stdout(), err: p.stderr() };
  };

  it('stops at exactly 20 billed calls, says so, and goes on when the cap is raised, nothing paid twice', async () => {
    const first = await cli([
      'backfill',
      'earthquakes',
      '--from',
      FROM,
      '--to',
      TO,
      '--max-billed-calls',
      '20',
      '--wait',
    ]);
    expect(first.err).not.toMatch(/^\s+at /m);
    expect(first.code).toBe(1);
    const id = /backfill (bf-\d{8}-[0-9a-f]{4}): 2 partitions enqueued, at most 20 billed calls/.exec(first.out)?.[1];
    expect(id, first.out).toBeDefined();
    expect(first.out).toContain('paused by budget: 20 of 20 billed calls; raise with `gateway-ingest backfill budget');
    expect(billedByGateway(emulator)).toBe(20);
    expect(await billedInAudit(db)).toBe(20);
    // Both processes made calls: the cap held across them.
    for (const w of workers) expect(w.logs.some((l) => l.msg === 'gateway call')).toBe(true);
    // Held, not failed: the partitions are unfinished, and `status` and `backfill list` say why.
    const status = await cli(['status']);
    expect(status.out).toContain(`paused by budget until raised: backfill ${id} used 20 of 20 billed calls`);
    const list = await cli(['backfill', 'list']);
    expect(list.out).toMatch(new RegExp(`${id!}  paused by budget  created`));
    expect(list.out).toContain('billed calls: 20; budget: 20 of 20 used');

    const raised = await cli(['backfill', 'budget', id!, '1000', '--wait']);
    expect(raised.code).toBe(0);
    expect(raised.out).toContain(`backfill ${id}: max 1000 billed calls (active)`);
    expect(raised.out).toMatch(/finished: 2 done, 0 failed, 0 unfinished of 2 partitions/);
    expect(await storedEvents(db)).toEqual(asStored(catalog));
    // Every call the gateway saw is audited, and the ones held by the budget were never sent.
    const audit = await db.db.select().from(gatewayExecutions).orderBy(asc(gatewayExecutions.id));
    expect(audit).toHaveLength(emulator.calls.length);
    expect(audit.every((a) => a.backfillId === id)).toBe(true);
    const billed = billedByGateway(emulator);
    expect(await billedInAudit(db)).toBe(billed);
    // The same bound as an uninterrupted backfill of this month (docs/design.md "Cost"): the pause cost nothing.
    expect(billed).toBeLessThanOrEqual(Math.ceil(1.6 * 47));
    const [counter] = await db.db
      .select()
      .from(budgetCounters)
      .where(eq(budgetCounters.scope, `backfill:${id}`));
    expect(counter!.calls).toBe(billed);
    const after = await cli(['backfill', 'list', '--json']);
    expect((JSON.parse(after.out) as unknown[])[0]).toMatchObject({
      id,
      status: 'finished',
      budgetUsed: billed,
      billedCalls: billed,
      maxBilledCalls: 1000,
    });
    const halt = await backfillHaltOf(db, id!);
    expect(halt).toBeNull();
  });
});

/** The halt check of `--wait`, on queues of no consequence (only consulted at a budget). */
async function backfillHaltOf(db: TestDatabase, id: string) {
  const { Redis } = await import('ioredis');
  const { closeQueue, openQueue } = await import('../../src/queue/queues.js');
  const { redisUrl } = await import('../support/isolation.js');
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  const prefix = uniquePrefix();
  const queues = {
    earthquake: openQueue('earthquake', { connection, prefix }),
    indicator: openQueue('indicator', { connection, prefix }),
  };
  try {
    return await backfillHalt(db.db, queues, id, null);
  } finally {
    await Promise.all(Object.values(queues).map(closeQueue));
    connection.disconnect();
  }
}
