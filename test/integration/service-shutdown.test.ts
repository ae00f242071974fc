import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { earthquakeEvents, gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { createTestDatabase, trustGatewayCap, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { startGatewayProxy, type GatewayProxy } from '../support/gateway-proxy.js';
import { ensureStopped, spawnCli, type CliProcess } from '../support/run-cli.js';
import {
  dropPrefix,
  jobsDir,
  quake,
  randomKey,
  serviceEnv,
  tickQueue,
  waitFor,
  type JobsDir,
} from '../support/service.js';

const JOBS = `
earthquakes:
  - name: slow
    every: 1h
    lookback: 1d
`;

describe('start: graceful shutdown', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let proxy: GatewayProxy;
  let jobs: JobsDir;
  let prefix: string;
  const key = randomKey();
  const procs: CliProcess[] = [];

  beforeAll(async () => {
    emulator = await startEmulator({
      key,
      events: [quake('ci-slow-1', Date.now() - 3_600_000, 3.2, 'somewhere')],
      indicatorFiles: [],
    });
    proxy = await startGatewayProxy(emulator.url);
    jobs = jobsDir();
    jobs.write(JOBS);
  });

  beforeEach(async () => {
    db = await createTestDatabase();
    await trustGatewayCap(db, proxy.url);
    prefix = uniquePrefix();
    emulator.resetCalls();
    proxy.arrivals.length = 0;
  });

  afterEach(async () => {
    await Promise.all(procs.splice(0).map(ensureStopped));
    await db.drop();
    await dropPrefix(prefix);
  });

  afterAll(async () => {
    await proxy.close();
    await emulator.close();
    jobs.remove();
  });

  const start = (extra: Record<string, string>) => {
    const p = spawnCli(
      ['start', '--config', jobs.path],
      serviceEnv({ databaseUrl: db.url, prefix, gatewayUrl: proxy.url, key, extra }),
    );
    procs.push(p);
    return p;
  };

  it('SIGTERM during a slow gateway call lets the job finish, then exits 0', async () => {
    emulator.setLatencyMs(2_000);
    const p = start({ SHUTDOWN_DEADLINE_MS: '15000' });
    await waitFor(async () => proxy.arrivals.length > 0, 20_000, 'the gateway call');
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 0, signal: null });

    const messages = p.logs.map((l) => l.msg);
    expect(messages.indexOf('stopping: finishing in-flight jobs')).toBeLessThan(messages.indexOf('gateway call'));
    expect(p.logs.find((l) => l.msg === 'stopped')).toMatchObject({ cutOff: false });
    const partitions = await db.db.select().from(ingestPartitions);
    expect(partitions.map((x) => x.state)).toEqual(['done']);
    const calls = await db.db.select().from(gatewayExecutions);
    expect(calls.map((c) => [c.outcome, c.billed])).toEqual([['succeeded', true]]);
    expect(await db.db.select().from(earthquakeEvents).where(eq(earthquakeEvents.id, 'ci-slow-1'))).toHaveLength(1);
  });

  it('a job cut off by the deadline is written nowhere and is retried by the next start', async () => {
    emulator.setLatencyMs(3_000);
    const first = start({ SHUTDOWN_DEADLINE_MS: '200' });
    await waitFor(async () => proxy.arrivals.length > 0, 20_000, 'the gateway call');
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.logs.find((l) => l.msg === 'stopped' || l.msg?.startsWith('stopped;'))).toMatchObject({
      cutOff: true,
    });
    expect(await db.db.select().from(earthquakeEvents)).toHaveLength(0);
    expect((await db.db.select().from(ingestPartitions)).map((x) => x.state)).not.toContain('done');

    emulator.setLatencyMs(0);
    const second = start({});
    await waitFor(
      async () => {
        const rows = await db.db.select().from(ingestPartitions);
        return rows.length === 1 && rows[0]!.state === 'done';
      },
      60_000,
      'the cut-off window to be retried',
    );
    expect(await db.db.select().from(earthquakeEvents)).toHaveLength(1);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });

  it('an invalid jobs file exits 2 before scheduling anything', async () => {
    const bad = jobsDir();
    bad.write('earthquakes:\n  - name: broken\n    every: soon\n');
    try {
      const p = spawnCli(
        ['start', '--config', bad.path],
        serviceEnv({ databaseUrl: db.url, prefix, gatewayUrl: proxy.url, key }),
      );
      procs.push(p);
      expect((await p.exited).code).toBe(2);
      expect(p.stderr()).toContain('earthquakes[0].every');
      const ticks = tickQueue(prefix);
      expect(await ticks.queue.getJobSchedulersCount()).toBe(0);
      await ticks.close();
    } finally {
      bad.remove();
    }
  });
});
