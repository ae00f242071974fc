import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { loadPartition } from '../../src/db/partitions.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '@gateway-ingest/emulator';
import { UndiciGateway, type Gateway } from '../../src/gateway/client.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { silentLog } from '../../src/log.js';
import { frontierSchema, type Frontier } from '../../src/planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../../src/planning/work.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { processEarthquakeWindow } from '../../src/worker/earthquake-window.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { Queue } from 'bullmq';
import { closeQueue } from '../../src/queue/queues.js';
import { Redis } from 'ioredis';
import { redisUrl, uniquePrefix } from '../support/isolation.js';

const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-resume';
const NOW = () => new Date('2025-07-01T00:00:00Z');
/** About 1,700 events: several calls in every order, quick enough to replay many times. */
const WINDOW = { fromMs: Date.parse('2025-05-10T00:00:00Z'), toMs: Date.parse('2025-05-16T00:00:00Z') };

class Crash extends Error {}

/** A gateway that dies (as a killed process would) before sending call number `after + 1`. */
function crashingAfter(inner: Gateway, after: number): Gateway & { calls: number } {
  const g = {
    baseUrl: inner.baseUrl,
    calls: 0,
    queryEarthquakes(req: Parameters<Gateway['queryEarthquakes']>[0], signal?: AbortSignal) {
      if (g.calls >= after) throw new Crash(`crashed before call ${after + 1}`);
      g.calls++;
      return inner.queryEarthquakes(req, signal);
    },
    queryIndicator: inner.queryIndicator.bind(inner),
    probeLiveness: inner.probeLiveness.bind(inner),
    close: () => inner.close(),
  };
  return g;
}

interface Scenario {
  db: TestDatabase;
  emulator: RunningEmulator;
  gateway: UndiciGateway;
  job: EarthquakeWindowJob;
}

async function scenario(options: Partial<EmulatorOptions>): Promise<Scenario> {
  const db = await createTestDatabase();
  const emulator = await startEmulator({
    key: KEY,
    earthquakeFiles: [MONTH],
    indicatorFiles: [],
    seed: 7,
    now: NOW,
    ...options,
  });
  const gateway = new UndiciGateway({
    baseUrl: emulator.url,
    key: KEY,
    authHeader: 'authorization',
    timeoutMs: 10_000,
  });
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  const queue = new Queue('earthquake-windows', { connection, prefix: uniquePrefix() });
  try {
    const summary = await enqueueEarthquakeBackfill(db.db, queue, { filters: NO_FILTERS, ...WINDOW, refresh: false });
    const job = (await queue.getJobs(['waiting']))[0]!.data as EarthquakeWindowJob;
    expect(summary.planned).toBe(1);
    return { db, emulator, gateway, job };
  } finally {
    await queue.obliterate({ force: true });
    await closeQueue(queue);
    connection.disconnect();
  }
}

async function close(s: Scenario): Promise<void> {
  await s.gateway.close();
  await s.emulator.close();
  await s.db.drop();
}

const requestsOf = (emulator: RunningEmulator) =>
  emulator.calls.filter((c) => c.billed).map((c) => JSON.stringify(c.body));

async function storedCount(db: TestDatabase): Promise<number> {
  const r = await db.db.execute<{ n: number }>(sql`select count(*)::int as n from earthquake_events`);
  return r.rows[0]!.n;
}

async function runWhole(options: Partial<EmulatorOptions>): Promise<{ requests: string[]; events: number }> {
  const s = await scenario(options);
  try {
    const deps = { gateway: s.gateway, db: s.db.db, log: silentLog(), knowledgeTtlMs: 3_600_000 };
    await processEarthquakeWindow(s.job, { jobId: 'whole', attempt: 1 }, deps);
    return { requests: requestsOf(s.emulator), events: await storedCount(s.db) };
  } finally {
    await close(s);
  }
}

/** A persisted task as the cases name it: a walk by the end it is anchored at and whether an order guess placed it. */
function taskLabel(task: Frontier['tasks'][number] | undefined): string {
  if (task === undefined) return 'none';
  if (task.kind === 'scan' || task.kind === 'probe') return task.kind;
  return `walk from ${task.from}${task.guessed ? ' guessed' : ''}`;
}

/** Kills the job after every single call and resumes it with a fresh processor each time. */
async function runCallByCall(
  options: Partial<EmulatorOptions>,
): Promise<{ requests: string[]; events: number; stoppedIn: string[] }> {
  const s = await scenario(options);
  try {
    const stoppedIn: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const deps = { gateway: crashingAfter(s.gateway, 1), db: s.db.db, log: silentLog(), knowledgeTtlMs: 3_600_000 };
      const finished = await processEarthquakeWindow(s.job, { jobId: 'killed', attempt }, deps).then(
        () => true,
        (e: unknown) => {
          if (e instanceof Crash) return false;
          throw e;
        },
      );
      if (finished) break;
      const saved = (await loadPartition(s.db.db, s.job))?.frontier ?? null;
      // Before the first answer (after a cap probe) there is no frontier yet.
      const stored = frontierSchema.safeParse(saved);
      stoppedIn.push(saved === null ? 'none' : stored.success ? taskLabel(stored.data.tasks[0]) : 'unparsed');
    }
    return { requests: requestsOf(s.emulator), events: await storedCount(s.db), stoppedIn };
  } finally {
    await close(s);
  }
}

/**
 * The same window run without interruption, and killed after every call and resumed by a fresh
 * processor each time: the killed run bills exactly the calls of the uninterrupted one, so nothing
 * already paid for is asked again, whatever task the persisted frontier held when it stopped.
 * `kinds`: tasks some stop must have found first in the frontier, so that each state the gateway
 * leads the read through is resumed at least once: a walk from the newest events, a walk that
 * turned up after an oldest-first answer, a chunk placed under an order guess (whose outcome is
 * tallied when its answer comes), plain chunks sized from rates, and circle cuts of a crowded second.
 */
const GUESSED_DOWN = ['walk from newest guessed', 'walk from newest'];
const GATEWAYS: Array<{ name: string; options: Partial<EmulatorOptions>; kinds: string[] }> = [
  { name: 'newest-first', options: { order: 'newest' }, kinds: GUESSED_DOWN },
  { name: 'oldest-first', options: { order: 'oldest' }, kinds: ['walk from oldest guessed', 'walk from oldest'] },
  { name: 'random', options: { order: 'random' }, kinds: ['walk from newest'] },
  { name: 'largest magnitude first', options: { order: 'magnitude' }, kinds: ['walk from newest'] },
  { name: 'newest, random on 30% of calls', options: { order: 'mixed', mixedRandomRatio: 0.3 }, kinds: GUESSED_DOWN },
  {
    name: 'whole seconds, exclusive ends',
    options: { order: 'newest', timePrecision: 'second', startBoundary: 'exclusive', endBoundary: 'exclusive' },
    kinds: GUESSED_DOWN,
  },
  { name: 'a silent cap of 100', options: { order: 'newest', silentCap: 100 }, kinds: GUESSED_DOWN },
  {
    name: 'a crowded second',
    options: { order: 'newest', swarms: [{ at: new Date('2025-05-12T06:00:00Z'), count: 250, spread: 'world' }] },
    kinds: ['walk from newest', 'scan'],
  },
];

describe.each(GATEWAYS)('a window killed after any call resumes without paying twice ($name)', ({ options, kinds }) => {
  it('bills the same calls as an uninterrupted run and stores the same events', async () => {
    const whole = await runWhole(options);
    const killed = await runCallByCall(options);
    expect(killed.stoppedIn).not.toContain('unparsed');
    for (const kind of kinds) expect(killed.stoppedIn).toContain(kind);
    expect(killed.requests).toEqual(whole.requests);
    expect(new Set(killed.requests).size).toBe(killed.requests.length);
    expect(killed.events).toBe(whole.events);
  });
});
