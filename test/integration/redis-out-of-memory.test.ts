import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataFolder, loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { ingestPartitions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { ServiceUnavailableError } from '../../src/errors.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { reconcileQueues } from '../../src/ingest/reconcile.js';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { freePort, hasRedisServer, runRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

/**
 * A Redis at its maxmemory under noeviction (as BullMQ needs) refuses every write. A backfill asked
 * for then says so plainly, its windows recorded in PostgreSQL; once Redis takes writes again a
 * worker's reconciler queues them, and the backfill completes with nothing lost or bought twice.
 */
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-redis-oom';
const FROM = Date.parse('2025-05-10T00:00:00Z');
const TO = Date.parse('2025-05-12T00:00:00Z');

describe.skipIf(!hasRedisServer)('a Redis out of memory', () => {
  let redis: ReturnType<typeof runRedis>;
  let admin: Redis;
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;

  beforeAll(async () => {
    const port = await freePort();
    redis = runRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    admin = new Redis(url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    await waitFor(async () => (await admin.ping().catch(() => null)) === 'PONG', 10_000, 'redis');
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      now: () => new Date('2025-07-01T00:00:00Z'),
    });
    pipeline = startPipeline(db, emulator, KEY, { redisUrl: url });
  });

  afterAll(async () => {
    try {
      await admin.config('SET', 'maxmemory', '0');
      await pipeline.close();
      await emulator.close();
      await db.drop();
    } finally {
      admin.disconnect();
      await redis.stop();
    }
  });

  it('a backfill says so, its windows kept in PostgreSQL and queued once Redis takes writes', async () => {
    await admin.config('SET', 'maxmemory', '1');
    const backfill = () =>
      enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: NO_FILTERS,
        fromMs: FROM,
        toMs: TO,
        refresh: false,
      });
    const refused = await backfill().then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as Error).message).toMatch(/^Redis refuses writes: it is out of memory .* 0 of 1 jobs are queued/);
    const parts = await db.db.select().from(ingestPartitions);
    expect(parts.map((p) => p.state)).toEqual(['pending']);

    await admin.config('SET', 'maxmemory', '0');
    expect((await reconcileQueues(db.db, pipeline.queues)).requeued).toHaveLength(1);
    const ref = { streamKey: parts[0]!.streamKey, partitionKeys: [parts[0]!.partitionKey] };
    expect(await pipeline.run([ref])).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    const catalog = (await loadUsgsFile(MONTH)).filter((e) => Date.parse(e.time) >= FROM && Date.parse(e.time) <= TO);
    expect(await storedEvents(db)).toEqual(asStored(catalog));
    expect(emulator.calls.filter((c) => c.billed).length).toBeLessThanOrEqual(2 * Math.ceil(catalog.length / 200));
  });
});
