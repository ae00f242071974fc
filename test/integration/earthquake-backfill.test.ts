import { asc, count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earthquakeEvents, gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { loadUsgsFile, startEmulator, type EventOrder, type RunningEmulator } from '@gateway-ingest/emulator';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { dataFolder } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-earthquake';
const FROM = Date.parse('2025-05-01T00:00:00Z');
const TO = Date.parse('2025-06-10T00:00:00Z');
const NOW = () => new Date('2025-07-01T00:00:00Z');

let catalog: EarthquakeEvent[];

beforeAll(async () => {
  catalog = await loadUsgsFile(MONTH);
});

describe.each(['newest', 'oldest', 'random'] as const)(
  'earthquake backfill of a real month, gateway order %s',
  (order: EventOrder) => {
    let db: TestDatabase;
    let emulator: RunningEmulator;
    let pipeline: Pipeline;

    beforeAll(async () => {
      db = await createTestDatabase();
      emulator = await startEmulator({
        key: KEY,
        earthquakeFiles: [MONTH],
        indicatorFiles: [],
        order,
        seed: 42,
        now: NOW,
      });
      pipeline = startPipeline(db, emulator, KEY);
    });

    const backfillMonth = (refresh: boolean) =>
      enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: { minMagnitude: null, circle: null },
        fromMs: FROM,
        toMs: TO,
        refresh,
      });

    afterAll(async () => {
      await pipeline.close();
      await emulator.close();
      await db.drop();
    });

    it('stores exactly the catalog, every field, within the billed-call target', async () => {
      const summary = await backfillMonth(false);
      expect(summary.planned).toBe(2);
      const progress = await pipeline.run([summary]);
      expect(progress).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });

      expect(await storedEvents(db)).toEqual(asStored(catalog));

      const billed = emulator.calls.filter((c) => c.billed).length;
      // The ideal: per window, max(1, ceil(n / 200)) calls (docs/design.md "Cost").
      const parts = await db.db.select().from(ingestPartitions);
      const ideal = parts.reduce((sum, w) => {
        const n = catalog.filter(
          (e) => Date.parse(e.time) >= w.windowStart!.getTime() && Date.parse(e.time) <= w.windowEnd!.getTime(),
        ).length;
        return sum + Math.max(1, Math.ceil(n / 200));
      }, 0);
      // Measured on this month with about 10% to spare: a full answer proves nothing, so even the
      // orders a walk guesses (newest, oldest) pay for chunks that came back full.
      const target = (order === 'newest' ? 1.65 : 1.85) * ideal;
      process.stdout.write(
        `order ${order}: ${catalog.length} events, ${parts.length} windows, ${billed} billed calls, ideal ${ideal} (target <= ${target})\n`,
      );
      expect(billed).toBeLessThanOrEqual(target);
    });

    it('audits exactly the calls the gateway received', async () => {
      const audit = await db.db.select().from(gatewayExecutions).orderBy(asc(gatewayExecutions.id));
      expect(audit).toHaveLength(emulator.calls.length);
      expect(audit.map((a) => a.executionId).sort()).toEqual(emulator.calls.map((c) => c.executionId).sort());
      expect(audit.filter((a) => a.billed).length).toBe(emulator.calls.filter((c) => c.billed).length);
      expect(audit.reduce((n, a) => n + (a.units ?? 0), 0)).toBe(emulator.calls.reduce((n, c) => n + c.units, 0));
      const byExecution = new Map(audit.map((a) => [a.executionId, a]));
      for (const call of emulator.calls) {
        // A full answer may be truncated as far as the spec says; a truly truncated one always is.
        expect(byExecution.get(call.executionId)!.truncated).toBe(call.returned >= 200);
        if (call.truncated) expect(byExecution.get(call.executionId)!.truncated).toBe(true);
      }
      expect(emulator.calls.every((c) => !c.hadInvocationId && c.authorized)).toBe(true);
      expect(JSON.stringify(audit)).not.toContain(KEY);
    });

    it('a re-run plans nothing and bills nothing; --refresh re-reads without doubling rows', async () => {
      const callsBefore = emulator.calls.length;
      const [last] = await db.db.select({ id: sql<number>`max(id)::int` }).from(gatewayExecutions);
      const lastIdBefore = last!.id;
      const again = await backfillMonth(false);
      expect(again.planned).toBe(0);
      expect(emulator.calls.length).toBe(callsBefore);

      const refresh = await backfillMonth(true);
      expect(refresh.added).toBe(2);
      await pipeline.run([refresh]);
      expect(emulator.calls.length).toBeGreaterThan(callsBefore);
      // The re-read is sized from the stored events: close to the ideal (47 for this month), whatever the order.
      const refreshBilled = emulator.calls.slice(callsBefore).filter((c) => c.billed).length;
      process.stdout.write(`refresh ${order}: ${refreshBilled} billed calls (ideal 47)\n`);
      expect(refreshBilled).toBeLessThanOrEqual(Math.ceil(1.15 * 47));
      const [total] = await db.db.select({ n: count() }).from(earthquakeEvents);
      expect(total!.n).toBe(catalog.length);
      // Unchanged events re-read by the refresh are not counted as written (nothing was revised).
      const [written] = await db.db
        .select({ rows: sql<number>`coalesce(sum(rows_written), 0)::int` })
        .from(gatewayExecutions)
        .where(sql`${gatewayExecutions.id} > ${lastIdBefore}`);
      expect(written!.rows).toBe(0);
      const parts = await db.db.select().from(ingestPartitions).where(eq(ingestPartitions.state, 'done'));
      expect(parts).toHaveLength(2);
    });
  },
);

describe('earthquake backfill with lanes: idle call slots read parts of a stored window at once', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'newest',
      seed: 42,
      now: NOW,
      latencyMs: 20,
    });
    pipeline = startPipeline(db, emulator, KEY, { concurrency: 6, windowLanes: 4 });
  });

  afterAll(async () => {
    await pipeline.close();
    await emulator.close();
    await db.drop();
  });

  it('reads a month first with no lane cut from its rate, then again in parallel parts where its stored events end its chunks', async () => {
    const request = { filters: { minMagnitude: null, circle: null }, fromMs: FROM, toMs: TO };
    const first = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, { ...request, refresh: false });
    expect(await pipeline.run([first])).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    expect(await storedEvents(db)).toEqual(asStored(catalog));
    const firstBilled = emulator.calls.filter((c) => c.billed).length;
    // A lane cut from a rate costs about a call: a first read is not cut (the newest-first target above).
    expect(firstBilled).toBeLessThanOrEqual(Math.ceil(1.65 * 47));
    const overlap = async (since: Date) => {
      const audit = (await db.db.select().from(gatewayExecutions).orderBy(asc(gatewayExecutions.startedAt))).filter(
        (a) => a.startedAt >= since,
      );
      return audit.some((a, i) =>
        audit
          .slice(i + 1)
          .some((b) => b.partitionKey === a.partitionKey && b.startedAt < (a.finishedAt ?? a.startedAt)),
      );
    };

    const since = new Date();
    const callsBefore = emulator.calls.length;
    const again = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, { ...request, refresh: true });
    expect(await pipeline.run([again])).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    expect(await storedEvents(db)).toEqual(asStored(catalog));
    const billed = emulator.calls.slice(callsBefore).filter((c) => c.billed).length;
    process.stdout.write(`lanes: first read ${firstBilled}, re-read ${billed} billed calls (ideal 47)\n`);
    // Cut where the stored events end its chunks: no call more than one walk down them.
    expect(billed).toBeLessThanOrEqual(Math.ceil(1.15 * 47));
    // Two calls of one window overlapping in time: the window was read in lanes.
    expect(await overlap(since)).toBe(true);
  });
});
