import { sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { openDb } from '../../src/db/connection.js';
import { dataFolder, loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { gatewayExecutions } from '../../src/db/schema.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { eventRows, upsertEvents } from '../../src/db/earthquake-events.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { asStored, storedEvents, wireEvent } from '../support/events.js';
import { TWO_DAYS } from '../support/proxied-backfill.js';
import { waitFor } from '../support/wait.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

/**
 * Answers holding the same events are written at once whenever two reads cover the same time: two
 * streams (filtered and not) over one month, a refresh beside a backfill, a window's lanes, whose
 * chunks overlap by a second. The gateway's order differs between them, and a row is locked as its
 * upsert reaches it: unordered, two such writes deadlock and PostgreSQL aborts one, an answer paid for.
 */
const EVENTS: EarthquakeEvent[] = Array.from({ length: 400 }, (_, i) =>
  wireEvent(`us7000${String(i).padStart(4, '0')}`, Date.parse('2025-05-06T00:00:00Z') + i * 1_000),
);

const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const MAY = { fromMs: Date.parse('2025-05-06T00:00:00Z'), toMs: Date.parse('2025-06-05T00:00:00Z') };

/**
 * One stream per minimum magnitude over the May month, enqueued together and read at once; each
 * done, and every answer written once: one lost (to a deadlock, say) leaves its row billed unknown,
 * and its call is made again.
 */
async function readAtOnce(
  db: TestDatabase,
  pipeline: Pipeline,
  emulator: RunningEmulator,
  minMagnitudes: Array<number | null>,
): Promise<void> {
  const refs = [];
  for (const minMagnitude of minMagnitudes)
    refs.push(
      await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: { minMagnitude, circle: null },
        ...MAY,
        refresh: false,
      }),
    );
  const n = minMagnitudes.length;
  expect(await pipeline.run(refs)).toEqual({ total: n, done: n, partial: 0, failed: 0 });
  const audit = await db.db.select().from(gatewayExecutions);
  expect(audit.filter((a) => a.billed !== true)).toEqual([]);
  expect(audit.length).toBe(emulator.calls.filter((c) => c.billed).length);
}

describe('answers holding the same events, written at once in other orders', () => {
  it('never deadlock', async () => {
    const db = await createTestDatabase();
    const failures: unknown[] = [];
    try {
      for (let round = 0; round < 10; round++) {
        const revised = (events: EarthquakeEvent[], magnitude: number) =>
          eventRows(
            events.map((e) => ({ ...e, magnitude })),
            new Date(),
            0,
          );
        const reversed = [...EVENTS].reverse();
        const writes = [
          revised(EVENTS, round),
          revised(reversed, round + 0.5),
          revised(EVENTS.slice(100), round + 0.25),
          revised(reversed.slice(50), round + 0.75),
        ].map((rows) => upsertEvents(db.db, rows));
        for (const r of await Promise.allSettled(writes)) if (r.status === 'rejected') failures.push(r.reason);
      }
      const codes = failures.map((e) => (e as { cause?: { code?: string } }).cause?.code ?? String(e));
      expect(codes).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});

describe('three streams over one month, read at once by four workers of four lanes each', () => {
  it('write every answer once: the audit bills exactly what the gateway billed, and nothing is bought twice', async () => {
    const key = 'test-key-concurrent';
    const db = await createTestDatabase();
    const emulator = await startEmulator({
      key,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'random',
      seed: 7,
      now: () => new Date('2025-07-01T00:00:00Z'),
    });
    const pipeline = startPipeline(db, emulator, key, { concurrency: 4, windowLanes: 4 });
    try {
      await readAtOnce(db, pipeline, emulator, [null, -1, -0.5]);
      const inRange = (await loadUsgsFile(MONTH)).filter((e) => Date.parse(e.time) >= MAY.fromMs);
      expect((await storedEvents(db)).length).toBe(inRange.filter((e) => Date.parse(e.time) <= MAY.toMs).length);
    } finally {
      await pipeline.close();
      await emulator.close();
      await db.drop();
    }
  });
});

/** A login role of its own on `db`, with what the pipeline needs; `dropRole` after the database. */
async function roleOn(db: TestDatabase, attributes = ''): Promise<{ role: string; url: string }> {
  const role = `gi_limited_${Math.random().toString(36).slice(2, 10)}`;
  await db.db.execute(sql.raw(`create role ${role} login ${attributes}`));
  await db.db.execute(sql.raw(`grant all on schema public to ${role}`));
  await db.db.execute(sql.raw(`grant all on all tables in schema public to ${role}`));
  await db.db.execute(sql.raw(`grant all on all sequences in schema public to ${role}`));
  const url = new URL(db.url);
  url.username = role;
  return { role, url: url.toString() };
}

async function dropRole(role: string): Promise<void> {
  const admin = openDb(inject('databaseUrl'));
  await admin.db.execute(sql.raw(`drop role if exists ${role}`));
  await admin.close();
}

describe('a database at its connection limit', () => {
  it('is waited out like an outage: every answer written once, nothing failed', async () => {
    const key = 'test-key-limit';
    const db = await createTestDatabase();
    // A role of its own: the connection limit does not apply to a superuser.
    const { role, url } = await roleOn(db, 'connection limit 2');
    const limited = openDb(url, { max: 8 });
    const emulator = await startEmulator({
      key,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'random',
      seed: 5,
      now: () => new Date('2025-07-01T00:00:00Z'),
    });
    // Workers and the wait for them both go through the role at its limit.
    const pipeline = startPipeline({ ...db, ...limited }, emulator, key, {
      concurrency: 4,
      windowLanes: 4,
      attempts: 3,
    });
    try {
      await readAtOnce(db, pipeline, emulator, [null, -1]);
    } finally {
      await pipeline.close().catch(() => undefined);
      await emulator.close();
      await limited.close();
      // The database goes first (forced): the role cannot be dropped while it holds grants there.
      await db.drop();
      await dropRole(role);
    }
  });
});

/**
 * A failover can leave the pool's open connections on the old primary, become a read-only standby,
 * while new connections reach the new primary: every write on the old ones fails with 25006. Played
 * here by a role whose sessions are read-only until the "failover" ends; those opened before stay so.
 */
describe('a database read-only under the workers, as a failover leaves it', () => {
  it('is waited out like an outage until the connections are replaced: the backfill completes, nothing lost', async () => {
    const key = 'test-key-read-only';
    const db = await createTestDatabase();
    const { role, url } = await roleOn(db);
    await db.db.execute(sql.raw(`alter role ${role} set default_transaction_read_only = on`));
    const readOnly = openDb(url, { max: 4, maxLifetimeMs: 1_000 });
    const emulator = await startEmulator({
      key,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      seed: 5,
      now: () => new Date('2025-07-01T00:00:00Z'),
    });
    const pipeline = startPipeline({ ...db, ...readOnly }, emulator, key, { attempts: 2 });
    const rollbacks = async () => {
      const r = await db.db.execute<{ n: string }>(
        sql`select xact_rollback as n from pg_stat_database where datname = current_database()`,
      );
      return Number(r.rows[0]?.n ?? 0);
    };
    try {
      const before = await rollbacks();
      const ref = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: { minMagnitude: null, circle: null },
        ...TWO_DAYS,
        refresh: false,
      });
      // More refused writes than the job has attempts: on the code before, the window failed here.
      await waitFor(async () => (await rollbacks()) >= before + 4, 30_000, 'writes refused as read-only');
      await db.db.execute(sql.raw(`alter role ${role} reset default_transaction_read_only`));
      expect(await pipeline.run([ref])).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
      const catalog = (await loadUsgsFile(MONTH)).filter(
        (e) => Date.parse(e.time) >= TWO_DAYS.fromMs && Date.parse(e.time) <= TWO_DAYS.toMs,
      );
      expect(await storedEvents(db)).toEqual(asStored(catalog));
      const audit = await db.db.select().from(gatewayExecutions);
      expect(audit.filter((a) => a.billed === true).length).toBe(emulator.calls.filter((c) => c.billed).length);
      expect(audit.length).toBe(emulator.calls.length);
    } finally {
      await pipeline.close().catch(() => undefined);
      await emulator.close();
      await readOnly.close();
      await db.drop();
      await dropRole(role);
    }
  });
});
