import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { UnrecoverableError, Worker, type Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { backfills, ingestPartitions } from '../../src/db/schema.js';
import { enqueueEarthquakeBackfill, enqueueIndicatorBackfill } from '../../src/ingest/enqueue-backfill.js';
import { reconcileQueues } from '../../src/ingest/reconcile.js';
import { closeQueue, openQueue } from '../../src/queue/queues.js';
import { createTestDatabase, redisUrl, uniquePrefix, type TestDatabase } from '../support/isolation.js';

/** PostgreSQL holds the work; whatever Redis lost or failed is queued again, and nothing else. */
describe('queue reconciliation', () => {
  let db: TestDatabase;
  let connection: Redis;
  let queues: { earthquake: Queue; indicator: Queue };

  beforeAll(async () => {
    db = await createTestDatabase();
    connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const prefix = uniquePrefix();
    queues = {
      earthquake: openQueue('earthquake', { connection, prefix }),
      indicator: openQueue('indicator', { connection, prefix }),
    };
  });

  afterAll(async () => {
    await Promise.all(Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => closeQueue(q))));
    connection.disconnect();
    await db.drop();
  });

  const jobIds = async (q: Queue) => (await q.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.id).sort();

  it('re-adds the exact jobs of unfinished partitions after Redis lost its data, and only those', async () => {
    const quakes = await enqueueEarthquakeBackfill(db.db, queues.earthquake, {
      filters: { minMagnitude: 4.5, circle: { latitude: 35, longitude: 139, radiusKm: 500 } },
      fromMs: Date.parse('2024-01-01T00:00:00Z'),
      toMs: Date.parse('2024-07-01T00:00:00Z'),
      refresh: false,
    });
    const series = await enqueueIndicatorBackfill(db.db, queues.indicator, {
      indicators: ['SP.POP.TOTL'],
      countries: ['US'],
      fromYear: 1960,
      toYear: 2024,
      refresh: false,
    });
    const originals = {
      earthquake: (await queues.earthquake.getJobs(['waiting'])).map((j) => ({ id: j.id, data: j.data as unknown })),
      indicator: (await queues.indicator.getJobs(['waiting'])).map((j) => ({ id: j.id, data: j.data as unknown })),
    };
    expect(originals.earthquake).toHaveLength(quakes.planned);
    expect(originals.indicator).toHaveLength(series[0]!.planned);

    // One window finished meanwhile: its job must not come back.
    const doneKey = quakes.partitionKeys[0]!;
    await db.db.update(ingestPartitions).set({ state: 'done' }).where(eq(ingestPartitions.partitionKey, doneKey));
    await Promise.all(Object.values(queues).map((q) => q.obliterate({ force: true })));

    const result = await reconcileQueues(db.db, queues);
    expect(result.unbuildable).toEqual([]);
    expect(result.requeued).toHaveLength(quakes.planned - 1 + series[0]!.planned);
    const back = (await queues.earthquake.getJobs(['waiting'])).map((j) => ({ id: j.id, data: j.data as unknown }));
    const byId = (a: { id?: string }, b: { id?: string }) => String(a.id).localeCompare(String(b.id));
    expect(back.sort(byId)).toEqual(
      originals.earthquake.filter((j) => !String(j.id).endsWith(doneKey.replace(/[^A-Za-z0-9]+/g, ''))).sort(byId),
    );
    expect((await queues.indicator.getJobs(['waiting'])).map((j) => j.data as unknown)).toEqual(
      originals.indicator.map((j) => j.data),
    );

    // A second pass finds every job live and adds nothing.
    const again = await reconcileQueues(db.db, queues);
    expect(again.requeued).toEqual([]);
    expect(again.checked).toBe(result.checked);
  });

  it('queues again a job BullMQ failed while its partition is still unfinished', async () => {
    const ids = await jobIds(queues.indicator);
    // A worker whose every job fails for good, as BullMQ fails a job that stalled too often.
    const failing = new Worker(
      queues.indicator.name,
      async () => {
        throw new UnrecoverableError('stalled too often');
      },
      { connection, prefix: queues.indicator.opts.prefix!, concurrency: 4 },
    );
    await vi.waitFor(
      async () => expect(await queues.indicator.getJobCounts('failed')).toEqual({ failed: ids.length }),
      { timeout: 10_000 },
    );
    await failing.close();
    const r = await reconcileQueues(db.db, queues);
    expect(r.requeued).toHaveLength(ids.length);
    expect(await jobIds(queues.indicator)).toEqual(ids);
  });

  it('leaves the partitions of a paused backfill unqueued until it is resumed', async () => {
    await Promise.all(Object.values(queues).map((q) => q.obliterate({ force: true })));
    await db.db
      .insert(backfills)
      .values({ id: 'bf-paused', operation: 'indicator', description: 'test', streamKeys: [], control: 'paused' });
    await db.db
      .update(ingestPartitions)
      .set({ backfillId: 'bf-paused' })
      .where(eq(ingestPartitions.operation, 'indicator'));
    await reconcileQueues(db.db, queues);
    expect(await jobIds(queues.indicator)).toEqual([]);
    await db.db.update(backfills).set({ control: 'active' }).where(eq(backfills.id, 'bf-paused'));
    await reconcileQueues(db.db, queues);
    expect((await jobIds(queues.indicator)).length).toBeGreaterThan(0);
  });
});
