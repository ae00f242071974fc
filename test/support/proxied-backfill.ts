import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import { dataFolder, loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { startGatewayProxy, type Rewritten } from './gateway-proxy.js';
import { createTestDatabase, type TestDatabase } from './isolation.js';
import { startPipeline } from './pipeline.js';

export const MAY_MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-proxied';
/** Two days of the May month: a few hundred events, a few calls. */
export const TWO_DAYS = { fromMs: Date.parse('2025-05-10T00:00:00Z'), toMs: Date.parse('2025-05-12T00:00:00Z') };

type RunCount = Awaited<ReturnType<ReturnType<typeof startPipeline>['run']>>;

export type Rewrite = (body: string, status: number, asked: IncomingHttpHeaders) => Rewritten;

/**
 * Backfills `range` of the May month through a gateway whose answers pass `rewrite` (and which
 * `answerFirst` may answer itself), expects it done, then hands over the database, the emulator, and a way to backfill `range` again.
 */
export async function backfillThrough(
  rewrite: Rewrite,
  check: (db: TestDatabase, emulator: RunningEmulator, again: (refresh: boolean) => Promise<RunCount>) => Promise<void>,
  range: { fromMs: number; toMs: number } = TWO_DAYS,
  attempts = 1,
  answerFirst: (request: string) => Rewritten | null = () => null,
): Promise<void> {
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: KEY, earthquakeFiles: [MAY_MONTH], indicatorFiles: [], seed: 3 });
  const proxy = await startGatewayProxy(emulator.url, rewrite, answerFirst);
  const pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY, { attempts });
  try {
    const again = async (refresh: boolean) => {
      const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        filters: NO_FILTERS,
        ...range,
        refresh,
      });
      return pipeline.run([summary]);
    };
    expect(await again(false)).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    await check(db, emulator, again);
  } finally {
    await pipeline.close();
    await proxy.close();
    await emulator.close();
    await db.drop();
  }
}

/** The catalog's events of `range`, ends included. */
export const catalogOf = async ({ fromMs, toMs } = TWO_DAYS) =>
  (await loadUsgsFile(MAY_MONTH)).filter((e) => Date.parse(e.time) >= fromMs && Date.parse(e.time) <= toMs);
