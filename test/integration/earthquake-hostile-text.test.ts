import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayExecutions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { dataFolder } from '@gateway-ingest/emulator';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { storedEvents } from '../support/events.js';
import { startGatewayProxy, type GatewayProxy } from '../support/gateway-proxy.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

/**
 * JSON strings may hold U+0000 and unpaired surrogates, and a gateway within the spec may send them;
 * PostgreSQL text and jsonb hold neither. Such answers are stored with U+FFFD in their place (as a
 * UTF-8 encoder writes an unpaired surrogate) instead of failing the write and paying again.
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

describe('answers holding text PostgreSQL cannot store', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let proxy: GatewayProxy;
  let pipeline: Pipeline;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ key: KEY, earthquakeFiles: [MONTH], indicatorFiles: [], seed: 3 });
    proxy = await startGatewayProxy(emulator.url, hostile);
    pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY, { attempts: 1 });
  });

  afterAll(async () => {
    await pipeline.close();
    await proxy.close();
    await emulator.close();
    await db.drop();
  });

  it('are stored whole, each such character replaced by U+FFFD, and audited', async () => {
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters: NO_FILTERS,
      fromMs: FROM,
      toMs: TO,
      refresh: false,
    });
    expect(await pipeline.run([summary])).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });

    const catalog = (await loadUsgsFile(MONTH)).filter((e) => Date.parse(e.time) >= FROM && Date.parse(e.time) <= TO);
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
