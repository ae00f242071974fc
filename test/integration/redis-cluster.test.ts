/**
 * The product on a Redis Cluster (REDIS_CLUSTER_NODES), three masters started here: a backfill end
 * to end, a scheduled run of `start`, and a worker killed mid-run whose job another one finishes.
 * REDIS_URL points at a port nothing listens on, so any connection that ignored the cluster fails.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earthquakeEvents, ingestPartitions } from '../../src/db/schema.js';
import { dataFolder, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, trustGatewayCap, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { clusterKeys, missingClusterBinaries, startLocalCluster, type LocalCluster } from '../support/redis-cluster.js';
import { ensureStopped, spawnCli, type CliProcess } from '../support/run-cli.js';
import { jobsDir, quake, randomKey, waitFor, type JobsDir } from '../support/service.js';

const MISSING = missingClusterBinaries();
if (MISSING !== null) console.warn(`Redis Cluster tests SKIPPED: ${MISSING}`);

const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const HOUR = 3_600_000;

/** The emulator's events in [from, to], as the table should hold them. */
const within = (emulator: RunningEmulator, from: string, to: string) =>
  asStored(
    emulator
      .currentEvents()
      .filter((e: EarthquakeEvent) => Date.parse(e.time) >= Date.parse(from) && Date.parse(e.time) <= Date.parse(to)),
  );

describe.skipIf(MISSING !== null)('Redis Cluster', () => {
  let cluster: LocalCluster;
  const started: CliProcess[] = [];

  beforeAll(async () => {
    cluster = await startLocalCluster();
  });

  afterAll(async () => {
    await Promise.all(started.map(ensureStopped));
    await cluster?.stop();
  });

  const cli = (args: string[], env: Record<string, string>): CliProcess => {
    const p = spawnCli(args, env);
    started.push(p);
    return p;
  };

  /** What every process of one scenario reads: the cluster, never REDIS_URL. */
  const clusterEnv = (o: { db: TestDatabase; emulator: RunningEmulator; key: string; prefix: string }) => ({
    DATABASE_URL: o.db.url,
    REDIS_URL: 'redis://127.0.0.1:1/0',
    REDIS_CLUSTER_NODES: cluster.nodesVar,
    GATEWAY_BASE_URL: o.emulator.url,
    MARKET_KEY: o.key,
    QUEUE_PREFIX: o.prefix,
    RETRY_BASE_DELAY_MS: '50',
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
  });

  /** A database and an emulator serving the month, for one scenario. */
  async function scenario(latencyMs = 0) {
    const key = randomKey();
    const db = await createTestDatabase();
    const emulator = await startEmulator({ key, earthquakeFiles: [MONTH], indicatorFiles: [], latencyMs });
    return { key, db, emulator, prefix: uniquePrefix() };
  }

  it('backfill --inline stores exactly the catalog; every key of the queues is in one slot', async () => {
    const s = await scenario();
    try {
      const [from, to] = ['2025-05-20T00:00:00Z', '2025-05-21T12:00:00Z'];
      const run = cli(['backfill', 'earthquakes', '--from', from, '--to', to, '--inline', '--yes'], clusterEnv(s));
      const { code } = await run.exited;
      expect(code, run.stderr()).toBe(0);
      expect(run.stdout()).toMatch(/finished: 1 done, 0 failed, 0 unfinished of 1 partitions/);
      const want = within(s.emulator, from, to);
      expect(want.length).toBeGreaterThan(200); // more than one answer's worth: the window was walked
      expect(await storedEvents(s.db)).toEqual(want);
      expect(s.emulator.calls.length).toBeGreaterThan(1);

      // The prefix was hash-tagged: BullMQ's keys for this deployment all hash to one slot.
      const keys = await clusterKeys(cluster.client, `{${s.prefix}}:*`);
      expect(keys.length).toBeGreaterThan(0);
      const slots = new Set(await Promise.all(keys.map((k) => cluster.client.cluster('KEYSLOT', k))));
      expect(slots.size).toBe(1);
      expect(await clusterKeys(cluster.client, `${s.prefix}:*`)).toEqual([]);
    } finally {
      await s.emulator.close();
      await s.db.drop();
    }
  });

  it('start: a scheduler fires and its run ingests; readiness, metrics and Bull Board answer', async () => {
    const key = randomKey();
    const db = await createTestDatabase();
    const event = quake('cluster-tick-1', Date.now() - 2 * HOUR, 3.2, 'Cluster Ridge');
    const emulator = await startEmulator({ key, events: [event], indicatorFiles: [] });
    await trustGatewayCap(db, emulator.url);
    const jobs: JobsDir = jobsDir();
    jobs.write('earthquakes:\n  - name: recent\n    every: 1s\n    lookback: 1d\n');
    try {
      const env = { ...clusterEnv({ db, emulator, key, prefix: uniquePrefix() }), HTTP_PORT: '0' };
      const service = cli(['start', '--config', jobs.path], env);
      const listening = await service.waitForLog((l) => l.msg === 'http listening', 30_000);
      const url = `http://127.0.0.1:${String(listening['port'])}`;

      const stored = async () =>
        (await db.db.select().from(earthquakeEvents).where(eq(earthquakeEvents.id, event.id)))[0];
      const row = await waitFor(stored, 20_000, 'the scheduled run to store the event');
      expect(row).toMatchObject({ magnitude: 3.2, place: 'Cluster Ridge' });

      const ready = await fetch(`${url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([
        200,
        { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } },
      ]);
      // The window's job completes just after its events are stored: the scrape is polled until it counts it.
      const completed = (queue: string) =>
        new RegExp(`^gateway_ingest_queue_depth\\{queue="${queue}",state="completed"\\} [1-9]`, 'm');
      const scraped = async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return completed('earthquake-windows').test(text) && completed('schedule-ticks').test(text) && text;
      };
      await waitFor(scraped, 20_000, 'the metrics to count the completed window and tick');
      const board = await fetch(`${url}/queues/api/queues`);
      expect(board.status).toBe(200);
      const names = ((await board.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort();
      expect(names).toEqual(['earthquake-windows', 'indicator-chunks', 'schedule-ticks']);

      service.child.kill('SIGTERM');
      expect((await service.exited).code, service.stderr()).toBe(0);
    } finally {
      jobs.remove();
      await emulator.close();
      await db.drop();
    }
  });

  it('a worker killed mid-run: another one finishes its window, nothing is lost', async () => {
    // Slow answers and one call at a time: the window takes several seconds, the kill lands inside it.
    const s = await scenario(300);
    try {
      const env = { ...clusterEnv(s), WINDOW_LANES: '1', WORKER_CONCURRENCY: '1' };
      const first = cli(['worker'], env);
      await first.waitForLog((l) => l.msg === 'workers started', 30_000);
      const [from, to] = ['2025-05-22T00:00:00Z', '2025-05-23T12:00:00Z'];
      const waiter = cli(['backfill', 'earthquakes', '--from', from, '--to', to, '--wait', '--yes'], env);

      await waitFor(async () => s.emulator.calls.length >= 1, 30_000, 'the first worker to call the gateway');
      first.child.kill('SIGKILL');
      await first.exited;
      const [running] = await s.db.db.select().from(ingestPartitions);
      expect(running?.state).not.toBe('done');

      const second = cli(['worker'], env);
      const waited = await Promise.race([
        waiter.exited,
        new Promise<null>((r) => setTimeout(() => r(null), 45_000).unref()),
      ]);
      expect(waited?.code, waiter.stderr()).toBe(0);
      expect(waiter.stdout()).toMatch(/finished: 1 done, 0 failed, 0 unfinished of 1 partitions/);
      expect(await storedEvents(s.db)).toEqual(within(s.emulator, from, to));

      second.child.kill('SIGTERM');
      expect((await second.exited).code, second.stderr()).toBe(0);
    } finally {
      await s.emulator.close();
      await s.db.drop();
    }
  });
});
