import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { createTestDatabase, trustGatewayCap, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { freePort, hasRedisServer, runRedis } from '../support/redis-server.js';
import {
  jobsDir,
  quake,
  randomKey,
  startInProcess,
  waitFor,
  type InProcessService,
  type JobsDir,
} from '../support/service.js';

describe.skipIf(!hasRedisServer)('start: a Redis restart', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let jobs: JobsDir;
  let svc: InProcessService | undefined;
  let redis: ReturnType<typeof runRedis>;
  let port: number;
  const key = randomKey();

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key,
      events: [quake('ci-redis-1', Date.now() - 3_600_000, 4, 'Gamma')],
      indicatorFiles: [],
    });
    await trustGatewayCap(db, emulator.url);
    jobs = jobsDir();
    jobs.write('earthquakes:\n  - name: steady\n    every: 1s\n    lookback: 1d\n');
    port = await freePort();
    redis = runRedis(port);
  });

  afterAll(async () => {
    await svc?.stop();
    await redis.stop();
    await emulator.close();
    await db.drop();
    jobs.remove();
  });

  it('reconnects, re-creates lost schedulers and carries on; readiness reports the outage', async () => {
    const redisUrl = `redis://127.0.0.1:${port}/0`;
    await waitFor(
      async () =>
        spawnSync('redis-cli', ['-p', String(port), 'ping'])
          .stdout?.toString()
          .includes('PONG'),
      10_000,
      'redis',
    );
    svc = await startInProcess(
      { databaseUrl: db.url, prefix: uniquePrefix(), gatewayUrl: emulator.url, key, extra: { REDIS_URL: redisUrl } },
      jobs.path,
      { resyncMs: 300 },
    );
    await waitFor(async () => emulator.calls.length >= 2, 20_000, 'scheduled runs');

    await redis.stop(); // its data goes with it: no persistence
    await waitFor(async () => (await fetch(`${svc!.url}/readyz`)).status === 503, 10_000, 'readiness to fail');
    const body = (await (await fetch(`${svc.url}/readyz`)).json()) as { failed: Record<string, string> };
    expect(Object.keys(body.failed)).toEqual(['redis']);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);

    redis = runRedis(port);
    await waitFor(async () => (await fetch(`${svc!.url}/readyz`)).status === 200, 15_000, 'readiness to recover');
    const callsAfterRestart = emulator.calls.length;
    await waitFor(
      async () => emulator.calls.length >= callsAfterRestart + 2,
      15_000,
      'scheduled runs after the restart',
    );
  });
});
