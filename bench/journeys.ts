/**
 * Users' journeys through the pipeline on one database: each step a CLI command against the
 * emulator on the bundled real data, measured (billed calls against the ideal of the step's
 * windows, cap probes, windows done/partial/failed, events lost over proven coverage). Prints one
 * table per journey. A script, not a test: it asserts nothing. Steps marked "cap lapsed" follow what
 * stands for an hour passing (`Journey.lapse`): the default TTL, what was learned aged past it.
 *   npm run bench:journeys -- [journey,comma,separated] [--order newest|oldest|random|...] [--silent-cap N]
 * DATABASE_URL's server and REDIS_URL are used; each journey gets a database and queue prefix of its own.
 */
import { startEmulator, type EmulatorOptions } from '@gateway-ingest/emulator';
import {
  earthquakeBackfill,
  startJourney,
  stepLine,
  STEP_HEADER,
  type Journey,
  type StepFigures,
} from '../test/support/journey.js';

const KEY = 'bench-journey-key-0123456789';
type Run = (j: Journey, report: (s: StepFigures) => void) => Promise<void>;

const eq = earthquakeBackfill;

const JOURNEYS: Record<string, Run> = {
  /** The first reproduction: a month, then the months before it, then a refresh of all. */
  'month-then-before-then-refresh': async (j, report) => {
    report(await j.step('backfill 08-19..09-19', eq('2025-08-19', '2025-09-19')));
    await j.lapse();
    report(await j.step('backfill 05-01..08-19 (cap lapsed)', eq('2025-05-01', '2025-08-19')));
    report(await j.step('the same again', eq('2025-05-01', '2025-08-19')));
    await j.lapse();
    report(await j.step('refresh 05-01..09-19 (cap lapsed)', eq('2025-05-01', '2025-09-19', '--refresh')));
  },
  /** Ranges that overlap and nest, a filtered stream beside the first, and a refresh of part of a window. */
  'overlaps-filters': async (j, report) => {
    report(await j.step('backfill 08-25..09-05', eq('2025-08-25', '2025-09-05')));
    report(await j.step('backfill 08-15..09-19 (around it)', eq('2025-08-15', '2025-09-19')));
    await j.lapse();
    report(await j.step('M2.5+ 05-01..09-19 (cap lapsed)', eq('2025-05-01', '2025-09-19', '--min-magnitude', '2.5')));
    report(await j.step('refresh 09-01..09-10', eq('2025-09-01', '2025-09-10', '--refresh')));
    report(await j.step('backfill 05-10..05-25', eq('2025-05-10', '2025-05-25')));
  },
  /** The first reads the planner's bounds name beside whole months: a filtered stream's clusters, a small window. */
  'filtered-first-reads': async (j, report) => {
    report(await j.step('M2.5+ 05-01..06-05', eq('2025-05-01', '2025-06-05', '--min-magnitude', '2.5')));
    await j.lapse();
    const [from, to] = ['2025-08-20T00:00:00Z', '2025-09-16T12:00:00Z'];
    report(await j.step('M4.9+ 08-20..09-16T12 (201 events)', eq(from, to, '--min-magnitude', '4.9')));
  },
  /** A filtered stream whose window reaches past the data on a fresh database (its first answer reaches neither end), then read again, refreshed, and an overlapping range. */
  'past-the-data': async (j, report) => {
    // The bundled data ends on 09-18: the window's last 13 days are quiet.
    report(await j.step('M4.5+ 09-01..10-01 (282 events)', eq('2025-09-01', '2025-10-01', '--min-magnitude', '4.5')));
    report(await j.step('the same again', eq('2025-09-01', '2025-10-01', '--min-magnitude', '4.5')));
    await j.lapse();
    const refresh = eq('2025-09-01', '2025-10-01', '--min-magnitude', '4.5', '--refresh');
    report(await j.step('refresh of it (cap lapsed)', refresh));
    await j.lapse();
    report(
      await j.step(
        'M4.5+ 08-10..09-20, overlapping (cap lapsed)',
        eq('2025-08-10', '2025-09-20', '--min-magnitude', '4.5'),
      ),
    );
  },
};

interface Args {
  only: string[] | null;
  order: EmulatorOptions['order'];
  silentCap: number | undefined;
}

function parseArgs(argv: string[]): Args {
  let order: EmulatorOptions['order'] = 'newest';
  let silentCap: number | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--order') order = argv[++i] as EmulatorOptions['order'];
    else if (argv[i] === '--silent-cap') silentCap = Number(argv[++i]);
    else rest.push(argv[i]!);
  }
  return { only: rest[0] ? rest[0].split(',') : null, order, silentCap };
}

async function main(): Promise<void> {
  const { only, order, silentCap } = parseArgs(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  for (const [name, journey] of Object.entries(JOURNEYS)) {
    if (only && !only.includes(name)) continue;
    const emulator = await startEmulator({ key: KEY, seed: 1, order, silentCap });
    const j = await startJourney({ serverUrl, redisUrl, emulator, key: KEY, cap: silentCap });
    const cap = silentCap === undefined ? '' : `, silent cap ${silentCap}`;
    console.log(`\n### ${name} (order ${order}${cap})\n\n${STEP_HEADER}`);
    try {
      await journey(j, (s) => console.log(stepLine(s)));
    } finally {
      await j.close();
      await emulator.close();
    }
  }
}

await main();
