/**
 * `--wait` polls the partitions; a worker of the same process that ends a job wakes the next poll
 * at once, so that the wait does not sit out a poll interval after the last window is done.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markFailed, recordPlanned } from '../../src/db/partitions.js';
import { upsertStream } from '../../src/db/streams.js';
import { waitForPartitions } from '../../src/ingest/wait.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

const STREAM = 'earthquake:wakeups';
const POLL_MS = 60_000;

describe('waitForPartitions with wakeups', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await upsertStream(db.db, {
      streamKey: STREAM,
      operation: 'earthquake',
      params: { min_magnitude: null, circle: null },
    });
    await recordPlanned(
      db.db,
      [{ streamKey: STREAM, partitionKey: 'w1', operation: 'earthquake', jobId: 'j1' }],
      false,
    );
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('polls again when woken, long before the poll interval', async () => {
    let wake: (() => void) | null = null;
    let unsubscribed = 0;
    const startedAt = Date.now();
    const waiting = waitForPartitions(db.db, [{ streamKey: STREAM, partitionKeys: ['w1'] }], () => undefined, {
      pollMs: POLL_MS,
      wakeups: (w) => {
        wake = w;
        return () => void unsubscribed++;
      },
    });
    const subscribed = async () => {
      for (let i = 0; i < 200 && wake === null; i++) await new Promise((r) => setTimeout(r, 10));
      return wake;
    };
    expect(await subscribed()).not.toBeNull();
    await markFailed(db.db, { streamKey: STREAM, partitionKey: 'w1' }, 'given up', 'transport');
    wake!();
    const result = await waiting;
    expect(result).toMatchObject({ total: 1, failed: 1 });
    expect(Date.now() - startedAt).toBeLessThan(POLL_MS / 2);
    expect(unsubscribed).toBe(1);
  });
});
