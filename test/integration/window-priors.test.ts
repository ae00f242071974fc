import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordProof } from '../../src/db/coverage.js';
import { eventRows, upsertEvents } from '../../src/db/earthquake-events.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { earthquakeStream } from '../../src/domain/streams.js';
import { upsertStream } from '../../src/db/streams.js';
import { DAY_MS } from '../../src/domain/time.js';
import type { EarthquakeWindowJob } from '../../src/planning/work.js';
import { windowPriors } from '../../src/worker/window-priors.js';
import { wireEvent } from '../support/events.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

const STREAM = earthquakeStream(NO_FILTERS).streamKey;
const T0 = Date.parse('2025-01-01T00:00:00Z');
const job = (startDay: number, days: number): EarthquakeWindowJob => ({
  streamKey: STREAM,
  partitionKey: `w${startDay}`,
  windowStartMs: T0 + startDay * DAY_MS,
  windowEndMs: T0 + (startDay + days) * DAY_MS,
  filters: NO_FILTERS,
});

let db: TestDatabase;

/** 100 events a day over days [from, to), stored and proven. */
async function provenDays(from: number, to: number): Promise<void> {
  const events = [];
  for (let ms = T0 + from * DAY_MS; ms < T0 + to * DAY_MS; ms += DAY_MS / 100) events.push(wireEvent(`e${ms}`, ms));
  await upsertEvents(db.db, eventRows(events, new Date(), 0));
  await db.db.transaction((tx) =>
    recordProof(tx, STREAM, [{ lo: T0 + from * DAY_MS, hi: T0 + to * DAY_MS }], new Date()),
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  await upsertStream(db.db, earthquakeStream(NO_FILTERS));
  await provenDays(0, 10);
});
afterAll(async () => db?.drop());

describe('what a first read starts from', () => {
  it('the rate of a proven neighbour, right beside the window', async () => {
    const { rate } = await windowPriors(db.db, job(10, 31));
    expect(rate).toBeDefined();
    expect((rate!.events / rate!.ms) * DAY_MS).toBeCloseTo(100, 0);
  });

  it('the rate of the nearest proven stretch of the stream, far from the window', async () => {
    const { rate } = await windowPriors(db.db, job(100, 31));
    expect(rate).toBeDefined();
    expect((rate!.events / rate!.ms) * DAY_MS).toBeCloseTo(100, 0);
  });

  it('nothing for a stream with nothing proven', async () => {
    expect(await windowPriors(db.db, { ...job(100, 31), streamKey: 'earthquake:other' })).toEqual({});
  });

  it('its own stored events when the window itself is proven', async () => {
    const { stored, rate } = await windowPriors(db.db, job(2, 5));
    expect(rate).toBeUndefined();
    expect(stored?.points.length).toBeGreaterThan(0);
  });
});
