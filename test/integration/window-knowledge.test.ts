import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordProof } from '../../src/db/coverage.js';
import { eventRows, upsertEvents } from '../../src/db/earthquake-events.js';
import {
  earthquakeGatewayKey,
  recordAnswerSize,
  recordMeasuredCap,
  recordRecount,
} from '../../src/db/gateway-knowledge.js';
import { upsertStream } from '../../src/db/streams.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { earthquakeStream } from '../../src/domain/streams.js';
import { DAY_MS } from '../../src/domain/time.js';
import { UndiciGateway } from '../../src/gateway/client.js';
import { silentLog } from '../../src/log.js';
import { sizingCap, windowRegion } from '../../src/planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../../src/planning/work.js';
import type { ProcessorDeps } from '../../src/worker/deps.js';
import { readWindowKnowledge } from '../../src/worker/window-knowledge.js';
import { wireEvent } from '../support/events.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

const STREAM = earthquakeStream(NO_FILTERS).streamKey;
const T0 = Date.parse('2025-01-01T00:00:00Z');
const BASE_URL = 'http://127.0.0.1:9';
const job = (startDay: number, days: number): EarthquakeWindowJob => ({
  streamKey: STREAM,
  partitionKey: `w${startDay}`,
  windowStartMs: T0 + startDay * DAY_MS,
  windowEndMs: T0 + (startDay + days) * DAY_MS,
  filters: NO_FILTERS,
});

let db: TestDatabase;
let deps: ProcessorDeps;

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
  const gateway = new UndiciGateway({ baseUrl: BASE_URL, key: 'k', authHeader: 'authorization', timeoutMs: 1_000 });
  deps = { gateway, db: db.db, log: silentLog(), knowledgeTtlMs: 60_000 };
  await upsertStream(db.db, earthquakeStream(NO_FILTERS));
  await provenDays(0, 10);
});
afterAll(async () => {
  await deps?.gateway.close();
  await db?.drop();
});

describe('what a window read starts from', () => {
  it('a first read next to proven days: the whole window asked first, the nearby rate kept for later', async () => {
    const k = await readWindowKnowledge(deps, job(10, 20), { kind: 'first' });
    expect(k.nearby).not.toBeNull();
    expect((k.nearby!.events / k.nearby!.ms) * DAY_MS).toBeCloseTo(100, 0);
    expect(k.pieces).toEqual([
      { region: windowRegion({ startMs: T0 + 10 * DAY_MS, endMs: T0 + 30 * DAY_MS }), stored: null },
    ]);
  });

  it('a first read over proven days asks only what no proof covers', async () => {
    const k = await readWindowKnowledge(deps, job(5, 20), { kind: 'first' });
    expect(k.scope).toHaveLength(1);
    // From the second before the end of the proof, widened, to the window's end.
    expect(k.scope[0]!.lo).toBeLessThan(T0 + 10 * DAY_MS);
    expect(k.scope[0]!.lo).toBeGreaterThan(T0 + 10 * DAY_MS - 3_000);
    expect(k.scope[0]!.hi).toBe(windowRegion({ startMs: T0, endMs: T0 + 25 * DAY_MS }).hi);
  });

  it('a refresh over proven and unproven days: stored events size the proven piece only', async () => {
    const k = await readWindowKnowledge(deps, job(5, 20), { kind: 'refresh' });
    expect(k.pieces).toHaveLength(2);
    const [proven, rest] = k.pieces;
    expect(proven!.stored?.trust).toBe('stored');
    expect(proven!.stored!.points.length).toBeGreaterThan(400);
    expect(rest!.stored).toBeNull();
  });

  it('nothing nearby for a stream whose events nothing proven holds (the unfiltered proof holds no M6)', async () => {
    const m6 = { ...job(100, 31), streamKey: 'earthquake:m6', filters: { minMagnitude: 6, circle: null } };
    const k = await readWindowKnowledge(deps, m6, { kind: 'first' });
    expect(k.nearby).toBeNull();
  });

  it('the cap: a lapsed floor sizes nothing; a probe within the TTL sizes chunks; the region of the largest answer is where a probe asks', async () => {
    const gatewayKey = earthquakeGatewayKey(BASE_URL);
    // Away from the window: a region inside the month around it would be dropped for that month.
    const region = { lo: T0 + 200 * DAY_MS, hi: T0 + 230 * DAY_MS };
    await recordAnswerSize(db.db, gatewayKey, { size: 200, region }, new Date(Date.now() - 120_000), 60_000);
    let k = await readWindowKnowledge(deps, job(10, 20), { kind: 'first' });
    expect(k.cap.floor).toBe(1);
    expect(sizingCap(k.cap)).toBe(200);
    expect(k.cap.probeRegions[0]).toEqual(region);
    await recordAnswerSize(db.db, gatewayKey, { size: 100, region: { lo: T0, hi: T0 + DAY_MS } }, new Date(), 60_000);
    await recordMeasuredCap(db.db, gatewayKey, 100, new Date());
    k = await readWindowKnowledge(deps, job(10, 20), { kind: 'first' });
    expect(k.cap).toMatchObject({ floor: 100, measured: 100 });
    expect(sizingCap(k.cap)).toBe(100);
  });
  it('the share of new events: none until enough was counted again, older reads fading, replaced after the TTL', async () => {
    const gatewayKey = earthquakeGatewayKey(BASE_URL);
    const share = async () => (await readWindowKnowledge(deps, job(0, 10), { kind: 'refresh' })).learnedShare;
    await recordRecount(db.db, gatewayKey, { stored: 500, added: 100 }, new Date(), 60_000);
    expect(await share()).toBeNull();
    await recordRecount(db.db, gatewayKey, { stored: 1_500, added: 30 }, new Date(), 60_000);
    // 0.8 x 500 + 1,500 counted, 0.8 x 100 + 30 new.
    expect(await share()).toBeCloseTo(110 / 1_900);
    // Counted more than the TTL ago: what the next read counts replaces it.
    await db.db.execute(sql`update gateway_knowledge set recounted_at = recounted_at - interval '2 minutes'`);
    expect(await share()).toBeNull();
    await recordRecount(db.db, gatewayKey, { stored: 2_000, added: 0 }, new Date(), 60_000);
    expect(await share()).toBe(0);
  });
});
