import { describe, expect, it } from 'vitest';
import { gatewayExecutions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { dataFolder } from '@gateway-ingest/emulator';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { asStored, storedEvents } from '../support/events.js';
import { startGatewayProxy } from '../support/gateway-proxy.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';

/**
 * Answers within the spec whose text other systems read differently: JSON strings holding U+0000
 * and unpaired surrogates (PostgreSQL text and jsonb hold neither), and event times in forms of RFC
 * 3339 that V8's Date.parse misreads or refuses. Each is stored as the instant or text it says,
 * instead of failing the write (and paying again) or storing another time.
 */
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-hostile-text';
const FROM = Date.parse('2025-05-10T00:00:00Z');
const TO = Date.parse('2025-05-12T00:00:00Z');
const NUL = '\\u0000';

/** Every place gains a NUL and a lone high surrogate, every envelope a message with a lone low one. */
function hostile(body: string): string {
  return body
    .replaceAll('"place":"', `"place":"${NUL}\\ud800 `)
    .replace(/"message":"[^"]*"/, `"message":"note ${NUL}\\udc00"`);
}

/** Each event time rewritten as the same instant at +05:30, a twelve-digit fraction and a lower-case t. */
function otherTimeForms(body: string): string {
  return body.replace(/"time":"([^"]+)"/g, (_, time: string) => {
    const local = new Date(Date.parse(time) + 330 * 60_000).toISOString();
    return `"time":"${local.slice(0, 10)}t${local.slice(11, 23)}456789012+05:30"`;
  });
}

/** Backfills the two days through a gateway whose answers pass `rewrite`, then hands over the database and emulator. */
async function backfillThrough(
  rewrite: (body: string) => string,
  check: (db: TestDatabase, emulator: RunningEmulator) => Promise<void>,
): Promise<void> {
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: KEY, earthquakeFiles: [MONTH], indicatorFiles: [], seed: 3 });
  const proxy = await startGatewayProxy(emulator.url, rewrite);
  const pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY, { attempts: 1 });
  try {
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters: NO_FILTERS,
      fromMs: FROM,
      toMs: TO,
      refresh: false,
    });
    expect(await pipeline.run([summary])).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    await check(db, emulator);
  } finally {
    await pipeline.close();
    await proxy.close();
    await emulator.close();
    await db.drop();
  }
}

const catalogDays = async () =>
  (await loadUsgsFile(MONTH)).filter((e) => Date.parse(e.time) >= FROM && Date.parse(e.time) <= TO);

describe('answers holding text PostgreSQL cannot store', () => {
  it('are stored whole, each such character replaced by U+FFFD, and audited', async () => {
    await backfillThrough(hostile, async (db, emulator) => {
      const catalog = await catalogDays();
      const table = await storedEvents(db);
      expect(table.map((e) => e.id).sort()).toEqual(catalog.map((e) => e.id).sort());
      const byId = new Map(catalog.map((e) => [e.id, e]));
      for (const e of table) {
        const original = byId.get(e.id)!.place;
        expect(e.place).toBe(original === null ? null : `\uFFFD\uFFFD ${original}`);
      }

      const audit = await db.db.select().from(gatewayExecutions);
      expect(audit.length).toBe(emulator.calls.length);
      for (const a of audit) expect(a.message).toBe('note \uFFFD\uFFFD');
    });
  });
});

describe('answers writing event times in other RFC 3339 forms', () => {
  it('store every event at the instant it was written, to the millisecond', async () => {
    await backfillThrough(otherTimeForms, async (db) => {
      expect(await storedEvents(db)).toEqual(asStored(await catalogDays()));
    });
  });
});
