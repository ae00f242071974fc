import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayExecutions, ingestPartitions, ingestStreams } from '../../src/db/schema.js';
import { PARTITION_STATE as S, type PartitionState } from '../../src/domain/partition.js';
import { streamErrors, type StreamErrors } from '../../src/service/dashboard/queries.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

/**
 * The status page's error query on hand-made rows: which failed call is a stream's last, what
 * overcame it and when, and which partitions count as being retried.
 */
const T0 = Date.parse('2025-06-15T10:00:00Z');
const at = (offsetMs: number) => new Date(T0 + offsetMs);

describe('dashboard: stream errors', () => {
  let db: TestDatabase;
  let errors: Map<string, StreamErrors>;

  async function stream(streamKey: string): Promise<void> {
    await db.db.insert(ingestStreams).values({ streamKey, operation: 'indicator', params: {} });
  }

  async function partition(
    streamKey: string,
    partitionKey: string,
    state: PartitionState,
    o: { lastError?: string; consecutiveFailures?: number; updatedAt?: Date; completedAt?: Date } = {},
  ): Promise<void> {
    await db.db.insert(ingestPartitions).values({
      streamKey,
      partitionKey,
      operation: 'indicator',
      state,
      startYear: 2000,
      endYear: 2009,
      lastError: o.lastError ?? null,
      lastErrorKind: o.lastError ? 'server' : null,
      consecutiveFailures: o.consecutiveFailures ?? 0,
      updatedAt: o.updatedAt ?? at(0),
      completedAt: o.completedAt ?? null,
    });
  }

  async function call(
    streamKey: string,
    partitionKey: string,
    startMs: number,
    error: string | null,
    finishMs: number | null = startMs + 200,
  ): Promise<void> {
    await db.db.insert(gatewayExecutions).values({
      operation: 'indicator',
      streamKey,
      partitionKey,
      request: {},
      httpStatus: error ? 500 : 200,
      billed: error === null,
      errorKind: error ? 'server' : null,
      errorDetail: error,
      startedAt: at(startMs),
      finishedAt: finishMs === null ? null : at(finishMs),
    });
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    // A: two failed calls, the newer one followed by an answer on the same partition.
    await stream('a');
    await partition('a', 'a1', S.done, { completedAt: at(1_200) });
    await call('a', 'a1', -60_000, 'older failure');
    await call('a', 'a1', 0, 'newer failure');
    await call('a', 'a2', 500, null, null); // begun, never answered: no success
    await call('a', 'a1', 1_000, null, 1_200);
    await call('a', 'a1', 2_000, null, 2_200);
    // B: failed for good, nothing after.
    await stream('b');
    await partition('b', 'b1', S.failed, { lastError: 'gave up' });
    await call('b', 'b1', 0, 'gave up');
    // C: retries under way, and a running one that got an answer since its failure.
    await stream('c');
    await partition('c', 'c1', S.pending, { lastError: 'planned again', updatedAt: at(1_000) });
    await partition('c', 'c2', S.running, { lastError: 'failing', consecutiveFailures: 2, updatedAt: at(2_000) });
    await partition('c', 'c3', S.running, { lastError: 'answered since', consecutiveFailures: 0 });
    await partition('c', 'c4', S.done);
    // D: its partition finished without a further call (proven by another read).
    await stream('d');
    await partition('d', 'd1', S.done, { completedAt: at(5_000) });
    await call('d', 'd1', 0, 'before the proof');
    errors = await streamErrors(db.db);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('the newest failed call, overcome by the first answered call after it on the same partition', () => {
    expect(errors.get('a')?.lastError).toEqual({
      streamKey: 'a',
      partitionKey: 'a1',
      error: 'newer failure',
      kind: 'server',
      at: at(0),
      overcameAt: at(1_200),
    });
    expect(errors.get('a')?.retrying).toBe(0);
  });

  it('a failure nothing came after is not overcome', () => {
    expect(errors.get('b')?.lastError).toMatchObject({ error: 'gave up', overcameAt: null });
  });

  it('a partition finished after the failure overcame it, call or no call', () => {
    expect(errors.get('d')?.lastError).toMatchObject({ error: 'before the proof', overcameAt: at(5_000) });
  });

  it('retrying: planned again after a failure, or running with failures in a row; newest first', () => {
    const c = errors.get('c');
    expect(c?.lastError).toBeNull();
    expect(c?.retrying).toBe(2);
    expect(c?.retryingListed.map((r) => [r.partitionKey, r.error, r.since])).toEqual([
      ['c2', 'failing', at(2_000)],
      ['c1', 'planned again', at(1_000)],
    ]);
  });
});
