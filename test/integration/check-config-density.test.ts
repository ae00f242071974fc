import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigCommand } from '../../src/cli/commands/check-config.js';
import { redactUrl } from '../../src/config/env.js';
import { openDensityReader, storedDensitySample } from '../../src/db/queries/stream-density.js';
import { earthquakeEvents } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { spawnCli } from '../support/run-cli.js';

/**
 * check-config's densities (docs/jobs-yaml.md, "Projected billed calls") from events stored in a
 * migrated database: the filters of each stream, deleted events left out, the last 30 days with data.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** 40 days of events, across the start of US daylight saving (2025-03-09), to the day before NOW. */
const FIRST_DAY = Date.parse('2025-02-09T00:00:00Z');
const DAYS = 40;
const LAST_DAY = FIRST_DAY + (DAYS - 1) * DAY; // 2025-03-20
const SAMPLE_FIRST_DAY = LAST_DAY - 29 * DAY; // 2025-02-19
const NOW = () => new Date('2025-03-21T12:00:00Z');
const CALIFORNIA = { latitude: 36.7, longitude: -119.4, radiusKm: 400 };

type Row = typeof earthquakeEvents.$inferInsert;
let nextId = 0;
function event(timeMs: number, magnitude: number | null, latitude = 0, longitude = 0, deleted = false): Row {
  const at = new Date(timeMs);
  return {
    id: `ev${(nextId += 1)}`,
    time: at,
    magnitude,
    latitude,
    longitude,
    tsunamiFlag: false,
    firstSeenAt: at,
    lastSeenAt: at,
    deletedAt: deleted ? new Date(timeMs + HOUR) : null,
  };
}

function catalog(): Row[] {
  const rows: Row[] = [];
  for (let d = 0; d < DAYS; d++) {
    const day = FIRST_DAY + d * DAY;
    // Every day: four M3 events, one M1 and one without a magnitude, at 0,0.
    for (const h of [1, 7, 13, 19]) rows.push(event(day + h * HOUR, 3));
    rows.push(event(day + 12 * HOUR, 1), event(day + 3 * HOUR, null));
    // The last three days: two M2 events in California (about 14 km from the centre) and one M2 in Tokyo.
    if (d >= DAYS - 3) {
      rows.push(event(day + 10 * HOUR, 2, 36.8, -119.5), event(day + 14 * HOUR, 2, 36.8, -119.5));
      rows.push(event(day + 16 * HOUR, 2, 35.68, 139.69));
    }
  }
  // The first instant of the sample is in it; the last millisecond before it is not.
  rows.push(event(SAMPLE_FIRST_DAY, 3), event(SAMPLE_FIRST_DAY - 1, 3));
  // A deleted event after all the others: the catalog no longer has it, so it moves nothing.
  rows.push(event(LAST_DAY + 2 * DAY, 5, 0, 0, true));
  return rows;
}

const JOBS = [
  'earthquakes:',
  '  - name: global-m2_5',
  '    min_magnitude: 2.5',
  '    refresh:',
  '      - { within: 2h, every: 10m }',
  '      - { within: 60d, every: 1d }',
  '  - name: california',
  '    circle: { latitude: 36.7, longitude: -119.4, radius_km: 400 }',
  '    every: 1h',
  '    lookback: 2d',
  '  - name: great',
  '    min_magnitude: 9',
  '    every: 1h',
  '  - name: all',
  '    every: 1h',
  '',
].join('\n');

describe('stream densities from stored events', () => {
  let db: TestDatabase;
  let dir: string;
  let jobsPath: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const rows = catalog();
    for (let i = 0; i < rows.length; i += 500) await db.db.insert(earthquakeEvents).values(rows.slice(i, i + 500));
    dir = await mkdtemp(join(tmpdir(), 'check-config-density-'));
    jobsPath = join(dir, 'jobs.yaml');
    await writeFile(jobsPath, JOBS);
  });

  afterAll(async () => {
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('counts the matching events of the last 30 days with data, per stream filter', async () => {
    // M2.5 and up: four a day over the 30 days, and the event at the first instant of the sample.
    expect(await storedDensitySample(db.db, { minMagnitude: 2.5, circle: null })).toEqual({ events: 121, days: 30 });
    // Everything not deleted: six a day, three more on each of the last three days, and the same boundary event.
    expect(await storedDensitySample(db.db, { minMagnitude: null, circle: null })).toEqual({
      events: 30 * 6 + 3 * 3 + 1,
      days: 30,
    });
    // The circle keeps the two California events a day; only three days hold any, so the sample is three days.
    expect(await storedDensitySample(db.db, { minMagnitude: null, circle: CALIFORNIA })).toEqual({
      events: 6,
      days: 3,
    });
    expect(await storedDensitySample(db.db, { minMagnitude: 2.5, circle: CALIFORNIA })).toBeNull();
    expect(await storedDensitySample(db.db, { minMagnitude: 9, circle: null })).toBeNull();
  });

  it("uses UTC days whatever the session's time zone", async () => {
    const url = new URL(db.url);
    url.searchParams.set('options', '-c timezone=America/Los_Angeles');
    const reader = openDensityReader(url.toString());
    try {
      expect(await storedDensitySample(reader.db, { minMagnitude: 2.5, circle: null })).toEqual({
        events: 121,
        days: 30,
      });
    } finally {
      await reader.close();
    }
  });

  it('check-config projects each stream from its density, and says which have none', async () => {
    let out = '';
    const program = new Command('gateway-ingest').exitOverride();
    program.addCommand(checkConfigCommand({ write: (t) => (out += t), now: NOW, env: { DATABASE_URL: db.url } }));
    await program.parseAsync(['check-config', '--config', jobsPath], { from: 'user' });
    const projection = out.split('\n\n')[1]!.trimEnd().split('\n');
    expect(projection[1]).toBe(
      `  densities: events stored in ${redactUrl(db.url)} matching each stream, last 30 days with data`,
    );
    expect(projection.slice(2)).toEqual([
      // 121 / 30 = 4.03 a day: 144 runs of one call; one daily run of the 2h-60d band in two windows (about 125 and 117 events).
      '  global-m2_5  146 calls/day, from 4.03 stored events/day',
      '    events 0-2h old    every 10m  144 runs/day × 1 call (1 window, ~0.34 events) = 144',
      '    events 2h-60d old  every 1d   1 run/day × 2 calls (2 windows, ~241.7 events) = 2',
      '  california   24 calls/day, from 2 stored events/day',
      '    events 0-2d old  every 1h  24 runs/day × 1 call (1 window, ~4 events) = 24',
      '  great        no events stored for this stream yet: density unknown; at least 24 calls/day (one per window)',
      '    events 0-1d old  every 1h  24 runs/day × 1 window',
      '  all          24 calls/day, from 6.33 stored events/day',
      '    events 0-1d old  every 1h  24 runs/day × 1 call (1 window, ~6.33 events) = 24',
      '  total        at least 218 calls/day (1 stream of unknown density counted at one call per window)',
    ]);
  });

  it('the command, run as an operator runs it, reads DATABASE_URL and exits 0', async () => {
    const cli = spawnCli(['check-config', '--config', jobsPath], { DATABASE_URL: db.url });
    const { code } = await cli.exited;
    expect(code).toBe(0);
    expect(cli.stdout()).toContain('  global-m2_5  ');
    expect(cli.stdout()).toContain('from 4.03 stored events/day');
    expect(cli.stdout()).toContain('  great        no events stored for this stream yet: density unknown');
  });
});
