import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { runMigrations } from '../db/migrate.js';
import { bundledDataPaths, startEmulator } from '../emulator/index.js';
import { enqueueEarthquakeBackfill, enqueueIndicatorBackfill } from '../ingest/enqueue-backfill.js';
import { demoBanner, demoDatabaseUrl, demoEnv } from './demo-env.js';
import { exitFor } from './exit.js';
import { loadEnv } from './runtime.js';
import { awaitBackfill, openSession } from './session.js';

const out = (line = '') => process.stdout.write(`${line}\n`);

/** The whole pipeline on the bundled real data, against a local emulator of the gateway. */
async function demo(): Promise<number> {
  out(demoBanner(demoDatabaseUrl(process.env.DATABASE_URL)));
  const startedAt = new Date();
  const key = randomBytes(16).toString('hex');
  const emulator = await startEmulator({ key, ...bundledDataPaths(), order: 'newest', retryAfterSeconds: 1 });
  // A few faults show retries and the audit of failed calls; every one is recovered from.
  emulator.injectFaults('server_error', 1);
  emulator.injectFaults('rate_limited', 1);
  const env = loadEnv(demoEnv(process.env, { url: emulator.url, key }));
  out(`gateway emulator on ${emulator.url}, serving the bundled USGS and World Bank files`);
  const { created } = await runMigrations(env.databaseUrl);
  out(created ? 'database created and migrated' : 'database migrated');
  const session = await openSession(env, { needGateway: true });
  try {
    const noFilters = { minMagnitude: null, circle: null };
    const summaries = [
      await enqueueEarthquakeBackfill(session.db.db, session.queues.earthquake, {
        filters: noFilters,
        fromMs: Date.parse('2023-03-31T00:00:00Z'),
        toMs: Date.parse('2023-04-08T00:00:00Z'),
        refresh: false,
      }),
      await enqueueEarthquakeBackfill(session.db.db, session.queues.earthquake, {
        filters: noFilters,
        fromMs: Date.parse('2025-05-01T00:00:00Z'),
        toMs: Date.parse('2025-09-30T00:00:00Z'),
        refresh: false,
      }),
      ...(await enqueueIndicatorBackfill(session.db.db, session.queues.indicator, {
        indicators: ['NY.GDP.MKTP.CD', 'SP.POP.TOTL', 'SP.DYN.IMRT.IN'],
        countries: ['USA', 'CHN', 'WLD', 'DEU', 'IND'],
        fromYear: 1960,
        toYear: new Date().getUTCFullYear(),
        refresh: false,
      })),
    ];
    const planned = summaries.reduce((n, s) => n + s.planned, 0);
    out(`planned ${planned} partitions (${summaries.length} streams); already-ingested ones are skipped`);
    const code = await awaitBackfill(
      session,
      summaries.map((s) => ({ streamKey: s.streamKey, partitionKeys: s.partitionKeys })),
      true,
    );
    await printSummary(session.db.db, startedAt);
    return code;
  } finally {
    await session.close();
    await emulator.close();
  }
}

type Db = Awaited<ReturnType<typeof openSession>>['db']['db'];

async function rows<T extends Record<string, unknown>>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  return (await db.execute<T>(query)).rows as T[];
}

async function printSummary(db: Db, since: Date): Promise<void> {
  out();
  out('gateway calls of this run (from the audit table gateway_executions):');
  const calls = await rows<{ operation: string; calls: number; billed: number; units: number; failed: number }>(
    db,
    sql`
    select operation, count(*)::int as calls, count(*) filter (where billed)::int as billed,
      coalesce(sum(units) filter (where billed), 0)::float8 as units, count(*) filter (where error_kind is not null)::int as failed
    from gateway_executions where started_at >= ${since.toISOString()} group by operation order by operation`,
  );
  for (const c of calls)
    out(
      `  ${c.operation.padEnd(10)} ${c.calls} calls, ${c.billed} billed (${c.units} units), ${c.failed} failed and retried`,
    );
  if (calls.length === 0) out('  none: everything was already ingested (re-runs bill nothing)');
  const [events] = await rows<{ n: number }>(db, sql`select count(*)::int as n from earthquake_events`);
  out(`\nearthquake_events holds ${events!.n} events. Strongest five:`);
  out('  select time, magnitude, place from earthquake_events order by magnitude desc nulls last limit 5;');
  for (const e of await rows<{ time: Date; magnitude: number; place: string }>(
    db,
    sql`select time, magnitude, place from earthquake_events order by magnitude desc nulls last limit 5`,
  )) {
    out(`  ${new Date(e.time).toISOString()}  M${e.magnitude}  ${e.place}`);
  }
  out("\nPopulation, United States and World, every ten years up to the data's last year (indicator_values):");
  // Years after the files' last column come back null (the bundled World Bank files end in 2015).
  const series = await rows<{ year: number; us: number | null; world: number | null }>(
    db,
    sql`
    select year, max(value) filter (where country_id = 'US') as us, max(value) filter (where country_id = '1W') as world
    from indicator_values where indicator_id = 'SP.POP.TOTL' and year % 10 = 0
      and year <= (select max(year) from indicator_values where indicator_id = 'SP.POP.TOTL' and value is not null)
    group by year order by year`,
  );
  out('  year  United States        World   US share');
  for (const s of series) {
    const share = s.us !== null && s.world ? `${((100 * s.us) / s.world).toFixed(2)}%` : '';
    // Aggregates may carry fractions of a person (the World Bank sums estimates): shown as whole people.
    const people = (v: number | null) => (v === null ? 'null' : Math.round(v).toString());
    out(`  ${s.year}  ${people(s.us).padStart(13)}  ${people(s.world).padStart(11)}   ${share}`);
  }
  out('\nMore: `gateway-ingest status`, and the SQL examples in README.md.');
}

demo()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((e: unknown) => {
    const { code, message } = exitFor(e);
    process.stderr.write(`demo failed: ${message ?? String(e)}\n`);
    process.exitCode = code;
  });
