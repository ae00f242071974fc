import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '@gateway-ingest/emulator';
import { gatewayExecutions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { storedEvents } from '../support/events.js';
import { startGatewayProxy } from '../support/gateway-proxy.js';
import { createTestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';

/**
 * "start_time must not be in the future" is judged on the gateway's clock, which may be behind
 * ours. A window reaching now whose walk asks about its last seconds is then refused as a parameter
 * error (unbilled), which no retry fixes on its own; time does. Such a refusal is asked again later
 * instead of failing the window for good.
 */
const KEY = 'test-key-clock';
/** More than the failed attempts in a row a window is allowed (8): a refusal time fixes is none of them. */
const REFUSALS = 12;

describe('a gateway whose clock is behind ours', () => {
  it('refuses the requests starting in its future until its clock gets there: the window completes', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000;
    // 300 events in the last half minute: the walk must ask about the last seconds on their own.
    const swarms = [
      { at: new Date(t0 - 30_000), count: 150, spread: 'world' as const },
      { at: new Date(t0 - 5_000), count: 150, spread: 'world' as const },
    ];
    const db = await createTestDatabase();
    const emulator = await startEmulator({ key: KEY, earthquakeFiles: [], indicatorFiles: [], swarms, seed: 5 });
    let refused = 0;
    const behind = (request: string) => {
      const start = Date.parse((JSON.parse(request) as { start_time: string }).start_time);
      if (refused >= REFUSALS || start <= t0 - 120_000) return null;
      refused++;
      return { status: 400, body: JSON.stringify({ code: 400, message: 'start_time must not be in the future' }) };
    };
    const proxy = await startGatewayProxy(emulator.url, undefined, behind);
    const pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY);
    try {
      const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: NO_FILTERS,
        fromMs: t0 - 3_600_000,
        toMs: t0,
        refresh: false,
      });
      expect(await pipeline.run([summary])).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
      expect(refused).toBe(REFUSALS);
      expect((await storedEvents(db)).length).toBe(300);
      const refusals = await db.db
        .select()
        .from(gatewayExecutions)
        .where(eq(gatewayExecutions.errorKind, 'parameters'));
      expect(refusals.map((r) => [r.httpStatus, r.billed])).toEqual(Array(REFUSALS).fill([400, false]));
      const billed = await db.db.select().from(gatewayExecutions).where(eq(gatewayExecutions.billed, true));
      expect(billed.length).toBe(emulator.calls.filter((c) => c.billed).length);
    } finally {
      await pipeline.close();
      await proxy.close();
      await emulator.close();
      await db.drop();
    }
  });
});
