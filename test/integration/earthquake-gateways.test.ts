import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import {
  loadUsgsFile,
  startEmulator,
  swarmEvents,
  type EmulatorOptions,
  type RunningEmulator,
} from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

/**
 * The real month backfilled through the real pipeline (queue, workers, gateway client, Postgres)
 * against gateways that behave as differently as the spec allows. In every case: the table holds
 * exactly the catalog, the audit holds exactly the calls the gateway answered, and the billed
 * calls stay within the bound measured for that gateway (docs/design.md, "Cost").
 */
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-gateways';
const FROM = Date.parse('2025-05-01T00:00:00Z');
const TO = Date.parse('2025-06-10T00:00:00Z');
const NOW = () => new Date('2025-07-01T00:00:00Z');
const SWARM_AT = new Date('2025-05-20T03:00:00Z');

/** `extra`: calls a crowded second costs on top (circle cuts, at most 48 per region), whatever the window holds. */
type Knob = {
  name: string;
  options: Partial<EmulatorOptions>;
  bound: number;
  extra?: number;
  /** The unit the gateway truncates reported times to (ms when absent). */
  reportedUnitMs?: number;
  unresolved?: boolean;
  knowledgeTtlMs?: number;
  minMagnitude?: number;
};

const SWARM_WORLD = { at: SWARM_AT, count: 250, spread: 'world' } as const;
const SWARM_PLACE = { at: SWARM_AT, count: 250, spread: 'place' } as const;

/**
 * Bounds are billed calls per ideal call (one per window, or ceil(events / cap)) as the planner
 * measures on this month, with about 10% to spare. A full answer proves nothing whatever the
 * order, so every order pays for the chunks that came back full; the guessed orders (newest,
 * oldest) pay the least, orders no time walk can follow (magnitude, ids, random) the most.
 */
const KNOBS: Knob[] = [
  // Nothing carried across windows: each learns the cap and the order from its own answers, at little extra cost.
  { name: 'newest-first, GATEWAY_KNOWLEDGE_TTL_MS=0', options: { order: 'newest' }, bound: 1.6, knowledgeTtlMs: 0 },
  { name: 'largest magnitude first', options: { order: 'magnitude' }, bound: 2.0 },
  { name: 'newest, random on 20% of calls', options: { order: 'mixed', mixedRandomRatio: 0.2 }, bound: 1.7 },
  {
    name: 'whole-second times',
    options: { order: 'newest', timePrecision: 'second' },
    bound: 1.6,
    reportedUnitMs: 1_000,
  },
  // Events reported up to a minute before the time the gateway filters on: before a query's start.
  {
    name: 'times to the minute, oldest first',
    options: { order: 'oldest', timePrecision: 'minute' },
    bound: 1.6,
    reportedUnitMs: 60_000,
  },
  // Any unit the spec leaves open: an event reported at 14:00 may lie anywhere up to 15:00, past a query starting at 14:20.
  {
    name: 'times to the hour, random order',
    options: { order: 'random', timePrecision: 'hour' },
    bound: 2.0,
    reportedUnitMs: 3_600_000,
  },
  // A day holds more than a cap: placed as if reported exactly, chunks were cut at midnights (5 x ideal).
  {
    name: 'times to the day, newest first',
    options: { order: 'newest', timePrecision: 'day' },
    bound: 1.8,
    reportedUnitMs: 86_400_000,
  },
  {
    name: 'both ends exclusive, random order',
    options: { order: 'random', startBoundary: 'exclusive', endBoundary: 'exclusive' },
    bound: 1.85,
  },
  { name: 'fractional seconds ignored', options: { order: 'oldest', ignoreFractionalSeconds: true }, bound: 1.85 },
  // Magnitudes are given to a tenth or a hundredth: dozens of the month's events sit exactly at 2.5.
  {
    name: 'an exclusive min_magnitude',
    options: { order: 'newest', minMagnitudeBoundary: 'exclusive' },
    // Ideal 8: the cap probe and each window's opening answer weigh a lot (measured 14 to 16 calls).
    bound: 2,
    minMagnitude: 2.5,
  },
  { name: 'silent cap of 100', options: { order: 'newest', silentCap: 100 }, bound: 1.6 },
  // Everything the spec leaves open at once, each the hard way.
  {
    name: 'random order, times to the minute, both ends exclusive, fractions ignored, a silent cap of 150',
    options: {
      order: 'random',
      timePrecision: 'minute',
      startBoundary: 'exclusive',
      endBoundary: 'exclusive',
      ignoreFractionalSeconds: true,
      silentCap: 150,
    },
    bound: 2.0,
    reportedUnitMs: 60_000,
  },
  {
    name: 'random order, times to the day, both ends exclusive, fractions ignored, a silent cap of 150',
    options: {
      order: 'random',
      timePrecision: 'day',
      startBoundary: 'exclusive',
      endBoundary: 'exclusive',
      ignoreFractionalSeconds: true,
      silentCap: 150,
    },
    bound: 1.8,
    reportedUnitMs: 86_400_000,
  },
  // Kept by id, a truncated answer is spread over its whole chunk like a random one.
  { name: 'smallest ids first', options: { order: 'id' }, bound: 2.0 },
  { name: 'largest ids first', options: { order: 'id-desc' }, bound: 2.0 },
  // Newest-first with a hole inside a truncated answer: its span does not show what it left out.
  { name: 'newest, one event swapped for an older one', options: { order: 'newest-swap' }, bound: 1.5 },
  {
    name: '250 events in one second, all over the world',
    options: { order: 'newest', swarms: [SWARM_WORLD] },
    bound: 1.6,
    extra: 20,
  },
  {
    name: '250 events in one second, in one place',
    options: { order: 'newest', swarms: [SWARM_PLACE] },
    bound: 1.6,
    extra: 40,
    unresolved: true,
  },
];

let month: EarthquakeEvent[];
beforeAll(async () => {
  month = await loadUsgsFile(MONTH);
});

describe.each(KNOBS)('a backfill against a gateway with $name', (knob) => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      seed: 17,
      now: NOW,
      ...knob.options,
    });
    pipeline = startPipeline(db, emulator, KEY, { knowledgeTtlMs: knob.knowledgeTtlMs });
  });

  afterAll(async () => {
    await pipeline.close();
    await emulator.close();
    await db.drop();
  });

  it('stores exactly the catalog, audits exactly the gateway calls, within the cost bound', async () => {
    const filters = knob.minMagnitude === undefined ? NO_FILTERS : { ...NO_FILTERS, minMagnitude: knob.minMagnitude };
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters,
      fromMs: FROM,
      toMs: TO,
      refresh: false,
    });
    const progress = await pipeline.run([summary]);
    const errors = await db.db.execute(sql`select partition_key, state, last_error from ingest_partitions`);
    expect(progress, JSON.stringify(errors.rows)).toEqual({
      total: 2,
      done: knob.unresolved ? 1 : 2,
      partial: knob.unresolved ? 1 : 0,
      failed: 0,
    });

    const swarm = (knob.options.swarms ?? []).flatMap((s) => swarmEvents(s, 17));
    const swarmSecond = (e: EarthquakeEvent) => Math.floor(Date.parse(e.time) / 1000) * 1000 === SWARM_AT.getTime();
    const wanted = (e: EarthquakeEvent) =>
      knob.minMagnitude === undefined || (e.magnitude !== null && e.magnitude >= knob.minMagnitude);
    const catalog = [...month, ...swarm].filter((e) => (!knob.unresolved || !swarmSecond(e)) && wanted(e));
    if (knob.minMagnitude !== undefined)
      expect(catalog.filter((e) => e.magnitude === knob.minMagnitude).length).toBeGreaterThan(10);
    const table = (await storedEvents(db)).filter((e) => !knob.unresolved || !swarmSecond(e));
    expect(table).toEqual(asStored(catalog, knob.reportedUnitMs));

    const audit = await db.db.select().from(gatewayExecutions);
    expect(audit.map((a) => a.executionId).sort()).toEqual(emulator.calls.map((c) => c.executionId).sort());
    expect(audit.filter((a) => a.billed).length).toBe(emulator.calls.filter((c) => c.billed).length);

    const cap = knob.options.silentCap ?? 200;
    const windows = await db.db.select().from(ingestPartitions);
    const ideal = windows.reduce((sum, w) => {
      const n = [...month, ...swarm].filter(
        (e) =>
          wanted(e) && Date.parse(e.time) >= w.windowStart!.getTime() && Date.parse(e.time) <= w.windowEnd!.getTime(),
      ).length;
      return sum + Math.max(1, Math.ceil(n / cap));
    }, 0);
    const billed = emulator.calls.filter((c) => c.billed).length;
    process.stdout.write(
      `${knob.name}: ${billed} billed calls for an ideal of ${ideal} (${(billed / ideal).toFixed(2)} x, bound ${knob.bound})\n`,
    );
    expect(billed).toBeLessThanOrEqual(knob.bound * ideal + (knob.extra ?? 0) + 3);

    if (knob.unresolved) {
      const partial = windows.find((w) => w.state === 'partial')!;
      const unresolved = (partial.frontier as { unresolved: Array<{ lo: number; hi: number }> }).unresolved;
      expect(unresolved.length).toBeGreaterThan(0);
      for (const r of unresolved) {
        expect(r.lo).toBeLessThanOrEqual(SWARM_AT.getTime());
        expect(r.hi - r.lo).toBeLessThanOrEqual(4000);
      }
    }
  });
});
