import { describe, expect, it } from 'vitest';
import { dataFolder, loadUsgsFile, startEmulator } from '@gateway-ingest/emulator';
import { earthquakeEvents } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';

/**
 * A gateway reporting event times to the hour (the spec gives no precision): an event of 00:45 is
 * reported at 00:00. Two backfills meet at 00:30, so such events are stored by the later one at a
 * time inside the earlier one's range. A refresh of the earlier range re-reads it complete without
 * them (their true times are past its end): they must not be taken for deleted.
 */
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-coarse';
const HOUR_MS = 3_600_000;
const FROM = Date.parse('2025-05-10T00:00:00Z');
const MEET = Date.parse('2025-05-11T00:30:00Z');
const TO = Date.parse('2025-05-12T00:00:00Z');

describe('a refresh against a gateway reporting hours', () => {
  it('marks nothing deleted: an event reported before a range it lies past is no candidate', async () => {
    const db = await createTestDatabase();
    const emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      seed: 5,
      now: () => new Date('2025-07-01T00:00:00Z'),
      order: 'random',
      timePrecision: 'hour',
    });
    const pipeline = startPipeline(db, emulator, KEY);
    const backfill = (fromMs: number, toMs: number, refresh: boolean) =>
      enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, { filters: NO_FILTERS, fromMs, toMs, refresh });
    try {
      const done = (n: number) => ({ total: n, done: n, partial: 0, failed: 0 });
      expect(await pipeline.run([await backfill(FROM, MEET, false)])).toEqual(done(1));
      expect(await pipeline.run([await backfill(MEET, TO, false)])).toEqual(done(1));
      const catalog = (await loadUsgsFile(MONTH)).filter((e) => Date.parse(e.time) >= FROM && Date.parse(e.time) <= TO);
      const across = catalog.filter((e) => Date.parse(e.time) > MEET && Date.parse(e.time) < MEET + HOUR_MS / 2);
      expect(across.length).toBeGreaterThan(5);

      expect(await pipeline.run([await backfill(FROM, MEET, true)])).toEqual(done(1));
      const rows = await db.db.select().from(earthquakeEvents);
      expect(rows.filter((r) => r.deletedAt !== null).map((r) => r.id)).toEqual([]);
      expect(rows).toHaveLength(catalog.length);
      expect(await storedEvents(db)).toEqual(asStored(catalog, HOUR_MS));
    } finally {
      await pipeline.close();
      await emulator.close();
      await db.drop();
    }
  });
});

describe('a refresh against a gateway reporting days, on a database holding the month', () => {
  it('is as cheap as a first read of its range, and complete', async () => {
    const DAY_MS = 86_400_000;
    const db = await createTestDatabase();
    const emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      seed: 4,
      now: () => new Date('2025-07-01T00:00:00Z'),
      order: 'newest',
      timePrecision: 'day',
    });
    const pipeline = startPipeline(db, emulator, KEY);
    const backfill = (from: string, to: string, refresh: boolean) =>
      enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: NO_FILTERS,
        fromMs: Date.parse(from),
        toMs: Date.parse(to),
        refresh,
      });
    const billed = () => emulator.calls.filter((c) => c.billed).length;
    try {
      const done = { total: 1, done: 1, partial: 0, failed: 0 };
      expect(await pipeline.run([await backfill('2025-05-10T00:00:00Z', '2025-06-05T00:00:00Z', false)])).toEqual(done);
      const before = billed();
      expect(await pipeline.run([await backfill('2025-05-15T00:00:00Z', '2025-05-25T00:00:00Z', true)])).toEqual(done);
      // A first read of the ten days on a fresh database takes 23 calls. Sized from the stored events as
      // they were stored, all of a day at its midnight, the refresh took 177 and failed at its ceiling.
      expect(billed() - before).toBeLessThanOrEqual(28);
      const catalog = (await loadUsgsFile(MONTH)).filter(
        (e) =>
          Date.parse(e.time) >= Date.parse('2025-05-10T00:00:00Z') &&
          Date.parse(e.time) <= Date.parse('2025-06-05T00:00:00Z'),
      );
      expect(await storedEvents(db)).toEqual(asStored(catalog, DAY_MS));
    } finally {
      await pipeline.close();
      await emulator.close();
      await db.drop();
    }
  });
});
