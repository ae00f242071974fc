import { randomBytes } from 'node:crypto';
import { runMigrations } from '../db/migrate.js';
import type { Db } from '../db/connection.js';
import { callsSince, eventCount, populationByDecade, strongestEvents } from '../db/queries/run-summary.js';
import { loadEmulator } from './emulator-package.js';
import { enqueueEarthquakeBackfill, enqueueIndicatorBackfill } from '../ingest/enqueue-backfill.js';
import { demoBanner, demoDatabaseUrl, demoEnv } from './demo-env.js';
import { exitFor } from './exit.js';
import { loadEnv } from './runtime.js';
import { awaitBackfill, openSession } from './session.js';
import { currentYearEverywhere } from '../domain/time.js';

const out = (line = '') => process.stdout.write(`${line}\n`);

/** The whole pipeline on the bundled real data, against a local emulator of the gateway. */
async function demo(): Promise<number> {
  out(demoBanner(demoDatabaseUrl(process.env.DATABASE_URL)));
  const startedAt = new Date();
  const key = randomBytes(16).toString('hex');
  const { bundledDataPaths, startEmulator } = await loadEmulator();
  const emulator = await startEmulator({ key, ...bundledDataPaths(), order: 'newest', retryAfterSeconds: 1 });
  // Closed whatever fails after it started: a migration refused must not leave the process running.
  try {
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
          toYear: currentYearEverywhere(Date.now()),
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
    }
  } finally {
    await emulator.close();
  }
}

async function printSummary(db: Db, since: Date): Promise<void> {
  out();
  out('gateway calls of this run (from the audit table gateway_executions):');
  const calls = await callsSince(db, since);
  for (const c of calls) {
    const line = `${c.calls} calls, ${c.billed} billed (${c.units} units), ${c.failed} failed and retried`;
    out(`  ${c.operation.padEnd(10)} ${line}`);
  }
  if (calls.length === 0) out('  none: everything was already ingested (re-runs bill nothing)');
  out(`\nearthquake_events holds ${await eventCount(db)} events. Strongest five:`);
  out('  select time, magnitude, place from earthquake_events order by magnitude desc nulls last limit 5;');
  for (const e of await strongestEvents(db, 5)) {
    out(`  ${new Date(e.time).toISOString()}  M${e.magnitude}  ${e.place}`);
  }
  out("\nPopulation, United States and World, every ten years up to the data's last year (indicator_values):");
  out('  year  United States        World   US share');
  for (const s of await populationByDecade(db)) {
    const share = s.us !== null && s.world ? `${((100 * s.us) / s.world).toFixed(2)}%` : '';
    // Aggregates may carry fractions of a person (the World Bank sums estimates): shown as whole people.
    const people = (v: number | null) => (v === null ? 'null' : Math.round(v).toString());
    out(`  ${s.year}  ${people(s.us).padStart(13)}  ${people(s.world).padStart(11)}   ${share}`);
  }
  out('\nMore: `gateway-ingest status`, and the SQL examples in docs/bi-and-sql.md.');
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
