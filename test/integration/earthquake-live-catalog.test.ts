import { and, eq, inArray, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earthquakeEvents, earthquakeRevisions, gatewayExecutions } from '../../src/db/schema.js';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import type { EarthquakeFilters } from '../../src/domain/filters.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { rollupDrift } from '../support/rollups.js';

/**
 * The catalog changes while it is read: events arrive, are revised (magnitude, place, time by a few
 * seconds) and deleted. One refresh after the changes stop must leave the table equal to the
 * catalog as it ended: revised fields current, deleted events marked (never removed), every mark
 * backed by an answer that proved it.
 */
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-live';
const FROM = Date.parse('2025-05-06T00:00:00Z');
const TO = Date.parse('2025-06-06T00:00:00Z');
const LIVE = { from: new Date(FROM + 3_600_000), to: new Date(TO - 3_600_000) };

const matches = (f: EarthquakeFilters) => (e: EarthquakeEvent) =>
  f.minMagnitude === null || (e.magnitude !== null && e.magnitude >= f.minMagnitude);
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

describe.each([
  { name: 'unfiltered', filters: { minMagnitude: null, circle: null } },
  { name: 'minimum magnitude 2.5', filters: { minMagnitude: 2.5, circle: null } },
])('a catalog that changes during the backfill ($name)', ({ filters }: { filters: EarthquakeFilters }) => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;
  const backfill = (refresh: boolean) =>
    enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, { filters, fromMs: FROM, toMs: TO, refresh });

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'newest',
      seed: 7,
      now: () => new Date(TO + 86_400_000),
    });
    pipeline = startPipeline(db, emulator, KEY, { concurrency: 2 });
  });

  afterAll(async () => {
    await pipeline.close();
    await emulator.close();
    await db.drop();
  });

  it('after one refresh the rows not marked deleted equal the catalog as it ended, and every deleted event is marked', async () => {
    // Changes while the backfill runs, and more after it, before the refresh.
    emulator.startLive({
      addPerMinute: 12_000,
      revisePerMinute: 6_000,
      deletePerMinute: 2_400,
      tickMs: 50,
      window: LIVE,
    });
    const first = await backfill(false);
    await pipeline.run([first]);
    emulator.stopLive();
    emulator.mutate({ add: 40, revise: 60, delete: 30 }, LIVE);
    const storedBefore = new Set((await storedEvents(db)).map((e) => e.id));

    const callsBefore = emulator.calls.length;
    const refresh = await backfill(true);
    expect(await pipeline.run([refresh])).toEqual({
      total: refresh.planned,
      done: refresh.planned,
      partial: 0,
      failed: 0,
    });
    const refreshCalls = emulator.calls.slice(callsBefore);

    const catalog = new Map(emulator.currentEvents().map((e) => [e.id, e]));
    const rows = await db.db.select().from(earthquakeEvents);
    const live = (await storedEvents(db)).filter((e) => rows.find((r) => r.id === e.id)!.deletedAt === null);
    const counts = { add: 0, revise: 0, delete: 0 };
    for (const c of emulator.changes) counts[c.kind]++;
    const marked = rows.filter((r) => r.deletedAt !== null);
    process.stdout.write(
      `live catalog (${JSON.stringify(filters)}): upstream ${counts.add} added, ${counts.revise} revised, ${counts.delete} deleted; ` +
        `table ${rows.length} rows, ${marked.length} marked deleted; refresh ${refreshCalls.filter((c) => c.billed).length} billed calls\n`,
    );

    // Nothing hard-deleted: every row stored before the refresh is still there.
    const ids = new Set(rows.map((r) => r.id));
    expect([...storedBefore].filter((id) => !ids.has(id))).toEqual([]);
    // Every row not marked deleted is in the catalog, field for field, as it ended.
    expect(live.sort(byId)).toEqual(asStored(live.map((e) => catalog.get(e.id) ?? { ...e, id: `missing ${e.id}` })));
    // Every event of the stream's catalog is stored.
    const wanted = [...catalog.values()]
      .filter((e) => Date.parse(e.time) >= FROM && Date.parse(e.time) <= TO)
      .filter(matches(filters));
    expect(wanted.filter((e) => !ids.has(e.id)).map((e) => e.id)).toEqual([]);
    // Every stored event the catalog no longer has is marked deleted, and none it still has.
    expect(rows.filter((r) => !catalog.has(r.id) && r.deletedAt === null).map((r) => r.id)).toEqual([]);
    expect(marked.filter((r) => catalog.has(r.id)).map((r) => r.id)).toEqual([]);
    expect(marked.length).toBeGreaterThan(0);

    // Every mark names the answer that proved it: a succeeded call of this stream, audited.
    const proofs = await db.db
      .select({ id: gatewayExecutions.id, outcome: gatewayExecutions.outcome, stream: gatewayExecutions.streamKey })
      .from(gatewayExecutions)
      .where(inArray(gatewayExecutions.id, [...new Set(marked.map((r) => r.deletedExecutionId!))]));
    expect(marked.every((r) => r.deletedExecutionId !== null)).toBe(true);
    expect(proofs.every((p) => p.outcome === 'succeeded' && p.stream === refresh.streamKey)).toBe(true);
    // ... and has its history row.
    const history = await db.db
      .select()
      .from(earthquakeRevisions)
      .where(and(eq(earthquakeRevisions.field, 'deleted'), isNotNull(earthquakeRevisions.newValue)));
    expect(new Set(history.map((h) => h.eventId))).toEqual(new Set(marked.map((r) => r.id)));
  });

  it('keeps the history of revised fields', async () => {
    const revisedUpstream = emulator.changes.filter(
      (c) => c.kind === 'revise' && c.before && c.after && c.before.magnitude !== c.after.magnitude,
    );
    const history = await db.db.select().from(earthquakeRevisions).where(eq(earthquakeRevisions.field, 'magnitude'));
    expect(history.length).toBeGreaterThan(0);
    // A recorded change is one the catalog made: its new value is a magnitude some revision of the event had.
    const afterValues = new Map<string, Set<unknown>>();
    for (const c of revisedUpstream)
      afterValues.set(c.id, (afterValues.get(c.id) ?? new Set()).add(c.after!.magnitude));
    expect(history.every((h) => afterValues.get(h.eventId)?.has(h.newValue))).toBe(true);
  });

  it('an event that comes back is restored, with its history', async () => {
    // The live mode never re-adds an id, so an event of the catalog is marked as if it had been
    // deleted and the next re-read finds it again.
    const back = emulator
      .currentEvents()
      .find((e) => matches(filters)(e) && Date.parse(e.time) > FROM && Date.parse(e.time) < TO)!;
    await db.db
      .update(earthquakeEvents)
      .set({ deletedAt: new Date(), deletedExecutionId: 1 })
      .where(eq(earthquakeEvents.id, back.id));
    const refresh = await backfill(true);
    await pipeline.run([refresh]);
    const [restored] = await db.db.select().from(earthquakeEvents).where(eq(earthquakeEvents.id, back.id));
    expect(restored!.deletedAt).toBeNull();
    const history = await db.db
      .select()
      .from(earthquakeRevisions)
      .where(and(eq(earthquakeRevisions.eventId, restored!.id), eq(earthquakeRevisions.field, 'deleted')));
    expect(history.some((h) => h.newValue === null)).toBe(true);
  });

  it('leaves the maintained roll-ups equal to a recount after the arrivals, revisions, deletions and restoring', async () => {
    expect(await rollupDrift(db.pool)).toEqual([]);
  });
});
