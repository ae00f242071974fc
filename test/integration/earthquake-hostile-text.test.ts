import { describe, expect, it } from 'vitest';
import { gatewayExecutions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { dataFolder } from '@gateway-ingest/emulator';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { asStored, storedEvents } from '../support/events.js';
import { startGatewayProxy, type Rewritten } from '../support/gateway-proxy.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';

/**
 * Answers within the spec whose text other systems read differently: JSON strings holding U+0000
 * and unpaired surrogates (PostgreSQL text and jsonb hold neither), event times in forms of RFC 3339
 * that V8's Date.parse misreads or refuses, and an empty match in a body the spec does not show.
 * Each is stored as the instant or text it says, instead of failing the window (and paying again)
 * or storing another time.
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

/** An empty match answered 404, its result left out: the spec shows no body for an empty match. */
function emptyAsNotFound(body: string): Rewritten {
  if (!body.includes('"events":[]')) return body;
  const { data, ...rest } = JSON.parse(body) as { data: { execution: unknown } };
  return { status: 404, body: JSON.stringify({ ...rest, message: 'no events', data: { execution: data.execution } }) };
}

/** Backfills `fromMs`..`toMs` through a gateway whose answers pass `rewrite`, then hands over the database and emulator. */
async function backfillThrough(
  rewrite: (body: string, status: number) => Rewritten,
  check: (db: TestDatabase, emulator: RunningEmulator) => Promise<void>,
  { fromMs, toMs } = { fromMs: FROM, toMs: TO },
): Promise<void> {
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: KEY, earthquakeFiles: [MONTH], indicatorFiles: [], seed: 3 });
  const proxy = await startGatewayProxy(emulator.url, rewrite);
  const pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY, { attempts: 1 });
  try {
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters: NO_FILTERS,
      fromMs,
      toMs,
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

describe('answers writing an empty match in a form the spec does not show', () => {
  it('are read as empty where the execution says no event was returned: the window is proven, once', async () => {
    const week = { fromMs: FROM - 30 * 86_400_000, toMs: FROM - 23 * 86_400_000 };
    await backfillThrough(
      emptyAsNotFound,
      async (db, emulator) => {
        expect(await storedEvents(db)).toEqual([]);
        const audit = await db.db.select().from(gatewayExecutions);
        expect(audit.map((a) => [a.httpStatus, a.outcome, a.units, a.errorKind])).toEqual([
          [404, 'succeeded', 0, null],
        ]);
        expect(emulator.calls.filter((c) => c.billed)).toHaveLength(1);
      },
      week,
    );
  });
});
