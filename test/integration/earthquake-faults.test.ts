import { asc, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earthquakeEvents, gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

const WEEK = `${dataFolder}usgs/all_week_2023-03-31_2023-04-07.geojson`;
const KEY = 'test-key-faults';
const NOW = () => new Date('2023-05-01T00:00:00Z');
const WINDOW = { fromMs: Date.parse('2023-03-31T00:00:00Z'), toMs: Date.parse('2023-04-08T00:00:00Z') };
const filters = { minMagnitude: null, circle: null };

describe('earthquake backfill through gateway faults', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [WEEK],
      indicatorFiles: [],
      seed: 7,
      now: NOW,
      retryAfterSeconds: 1,
    });
    pipeline = startPipeline(db, emulator, KEY, { attempts: 12 });
  });

  afterAll(async () => {
    await pipeline.close();
    await emulator.close();
    await db.drop();
  });

  it('retries every transient kind, audits every attempt, and still stores the exact catalog', async () => {
    for (const kind of [
      'server_error',
      'rate_limited',
      'connection_reset',
      'malformed_json',
      'schema_break',
      'data_source',
      'unknown_result',
    ] as const) {
      emulator.injectFaults(kind, 1);
    }
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters,
      ...WINDOW,
      refresh: false,
    });
    expect(await pipeline.run([summary])).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });

    const catalog = await loadUsgsFile(WEEK);
    const [stored] = await db.db.select({ n: count() }).from(earthquakeEvents);
    expect(stored!.n).toBe(catalog.length);

    const audit = await db.db.select().from(gatewayExecutions).orderBy(asc(gatewayExecutions.id));
    expect(audit).toHaveLength(emulator.calls.length);
    const kinds = audit.map((a) => a.errorKind).filter((k) => k !== null);
    expect(kinds).toEqual([
      'server',
      'rate_limited',
      'transport',
      'invalid_response',
      'invalid_response',
      'data_source',
      'unknown',
    ]);
    const reset = audit.find((a) => a.errorKind === 'transport')!;
    expect(reset.httpStatus).toBeNull();
    // Schema-breaking and cut-off answers were billed by the gateway: the audit says so, and wrote nothing.
    const broken = audit.filter((a) => a.errorKind === 'invalid_response');
    expect(broken.every((a) => a.billed && a.rowsWritten === 0)).toBe(true);
    expect(audit.filter((a) => a.billed).length).toBe(emulator.calls.filter((c) => c.billed).length);
    expect(audit.filter((a) => a.errorKind !== null).every((a) => a.errorDetail)).toBe(true);
  });

  it('a wrong key fails the window at once, unretried, with the reason recorded', async () => {
    const wrong = startPipeline(db, emulator, 'not-the-key', { attempts: 12 });
    try {
      const before = emulator.calls.length;
      const summary = await enqueueEarthquakeBackfill(db.db, wrong.queues.earthquake, {
        filters: { minMagnitude: 4.5, circle: null },
        ...WINDOW,
        refresh: false,
      });
      expect(await wrong.run([summary])).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });
      expect(emulator.calls.length - before).toBe(1);
      const [part] = await db.db
        .select()
        .from(ingestPartitions)
        .where(eq(ingestPartitions.streamKey, summary.streamKey));
      expect(part!.lastErrorKind).toBe('auth');
      expect(part!.lastError).toMatch(/auth/);
    } finally {
      await wrong.close();
    }
  });
});
