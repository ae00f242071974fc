/**
 * Backfill benchmark: the real USGS month tiled over a longer span, served by the emulator, backfilled by
 * the real pipeline into a throwaway database. Prints figures; asserts nothing.
 *   npm run bench -- [months=12] [order=newest|oldest|random] [latencyMs=0]
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { loadEnv } from '../cli/runtime.js';
import { openSession, startSessionWorkers } from '../cli/session.js';
import { dropDatabase, runMigrations } from '../db/migrate.js';
import { startEmulator, type EventOrder } from '../emulator/index.js';
import { enqueueEarthquakeBackfill } from '../ingest/enqueue-backfill.js';
import { waitForPartitions } from '../ingest/wait.js';
import { fixturesFolder } from '../paths.js';

const [monthsArg = '12', orderArg = 'newest', latencyArg = '0'] = process.argv.slice(2);
const months = Number(monthsArg);
const order = orderArg as EventOrder;
const FROM = Date.parse('2025-05-06T09:24:12Z');
const TO = FROM + months * 30.4 * 86_400_000;

async function bench(): Promise<void> {
  const key = randomBytes(8).toString('hex');
  const emulator = await startEmulator({
    key,
    earthquakeFiles: [`${fixturesFolder}usgs/all_month_2025-05-06_2025-06-05.csv`],
    indicatorFiles: [],
    tile: { from: new Date(FROM), to: new Date(TO) },
    order,
    seed: 1,
    latencyMs: Number(latencyArg),
    now: () => new Date(TO + 86_400_000),
  });
  const base = loadEnv();
  const dbUrl = new URL(base.databaseUrl);
  dbUrl.pathname = `/gateway_ingest_bench_${Date.now().toString(36)}`;
  const env = loadEnv({ ...process.env, DATABASE_URL: dbUrl.toString(), GATEWAY_BASE_URL: emulator.url, MARKET_KEY: key, QUEUE_PREFIX: `bench-${key}`, LOG_LEVEL: 'warn' });
  await runMigrations(env.databaseUrl);
  const session = await openSession(env, { needGateway: true });
  let peakRssMb = 0;
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, process.memoryUsage().rss / 2 ** 20)), 100);
  try {
    const t0 = performance.now();
    const summary = await enqueueEarthquakeBackfill(session.db.db, session.queues.earthquake, { filters: { minMagnitude: null, circle: null }, fromMs: FROM, toMs: TO, refresh: false });
    const workers = startSessionWorkers(session);
    const p = await waitForPartitions(session.db.db, [summary], () => undefined, { pollMs: 200 });
    const seconds = (performance.now() - t0) / 1000;
    await workers.close(5_000);
    const [row] = (await session.db.db.execute<{ events: number }>(sql`select count(*)::int as events from earthquake_events`)).rows;
    const events = row!.events;
    const billed = emulator.calls.filter((c) => c.billed).length;
    const pages = Math.ceil(events / 200);
    const lines = [
      `order ${order}, ${months} months tiled, concurrency ${env.workerConcurrency}, latency ${latencyArg} ms`,
      `windows ${p.total} (done ${p.done}, failed ${p.failed}), events ${events}`,
      `gateway calls ${emulator.calls.length}, billed ${billed} = ${(billed / pages).toFixed(2)} x ceil(events/200) (+ ${p.total} windows)`,
      `wall ${seconds.toFixed(1)} s, ${(events / seconds).toFixed(0)} events/s, peak RSS ${peakRssMb.toFixed(0)} MiB`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    clearInterval(sampler);
    await Promise.all(Object.values(session.queues).map((q) => q.obliterate({ force: true })));
    await session.close();
    await emulator.close();
    await dropDatabase(env.databaseUrl);
  }
}

bench().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
