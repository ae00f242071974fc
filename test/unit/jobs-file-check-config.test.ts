import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { formatJobsSummary, formatProjection, projectStreams } from '../../src/cli/actions/check-config.js';
import { checkConfigCommand } from '../../src/cli/commands/check-config.js';
import { configOption } from '../../src/cli/flags.js';
import { JobsFileError, loadJobsFile } from '../../src/config/jobs-file.js';
import { UsageError } from '../../src/errors.js';

/** A Monday: the weekly tiers and streams of the fixtures do not run in the next 24 h. */
const now = () => new Date('2026-06-15T12:00:00Z');
const fixture = (name: string) => join(import.meta.dirname, '../fixtures/jobs', name);
const JOBS_YAML = join(import.meta.dirname, '../../jobs.yaml');

/** Without DATABASE_URL unless `env` sets it: unit tests never depend on a database. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  let out = '';
  const program = new Command('gateway-ingest').exitOverride();
  program.addCommand(checkConfigCommand({ write: (text) => (out += text), now, env }));
  await program.parseAsync(['check-config', ...args], { from: 'user' });
  return out;
}

/** The stream lines: from the header to the blank line before the projection. */
const summaryOf = (out: string) => out.split('\n\n')[0]!.split('\n');
const projectionOf = (out: string) => out.split('\n\n')[1]!.trimEnd().split('\n');

describe('check-config', () => {
  it('prints one line per stream: kind, name, schedule, filters', async () => {
    const out = await run(['--config', fixture('example.yaml')]);
    const lines = summaryOf(out);
    expect(lines[0]).toBe(`${fixture('example.yaml')}: valid, 3 streams (2 earthquake, 1 indicator)`);
    expect(lines.slice(1)).toEqual([
      '  earthquake  global-m2_5  cron "*/10 * * * *" UTC  min_magnitude 2.5  worldwide  lookback 7d  backfill_from 2000-01-01T00:00:00Z',
      '  earthquake  california   cron "*/5 * * * *" UTC   any magnitude  circle 36.7,-119.4 radius 400 km  lookback 2d',
      '  indicator   macro        cron "0 4 * * 1" UTC     indicators NY.GDP.MKTP.CD,SP.POP.TOTL  countries US,CHN,WLD,DEU,IND  10 series  years 1960..current',
    ]);
  });

  it('shows every, time zones, year ranges and disabled streams', async () => {
    const out = await run(['--config', fixture('extras.yaml')]);
    expect(out).toContain('4 streams (2 earthquake, 2 indicator, 1 disabled)');
    expect(out).toContain('cron "30 0 */6 * * *" Asia/Tokyo');
    expect(out).toContain('(disabled: not scheduled)');
    expect(out).toContain('every 30s');
    expect(out).toContain('years 1960..2026 (67)');
    expect(out).toContain('years: gateway default (latest 10)');
  });

  it('throws the JobsFileError (a UsageError: exit 2) of an invalid file', async () => {
    const error: unknown = await run(['--config', fixture('invalid.yaml')]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobsFileError);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as JobsFileError).message.split('\n')).toHaveLength(13);
    expect((error as JobsFileError).message).toContain(`${fixture('invalid.yaml')}:3  earthquakes[0].min_magnitude`);
  });

  it('reads ./jobs.yaml by default, and names a missing file', async () => {
    expect(configOption().defaultValue).toBe('./jobs.yaml');
    expect(configOption().flags).toBe('--config <path>');
    await expect(run(['--config', fixture('missing.yaml')])).rejects.toThrow(
      `${fixture('missing.yaml')}: jobs file not found`,
    );
  });

  it('refuses an empty --config; an optional one stays unset without the flag', () => {
    const parse = (option: Option, args: string[]) =>
      new Command()
        .exitOverride()
        .configureOutput({ writeErr: () => undefined })
        .addOption(option)
        .parse(args, { from: 'user' })
        .opts();
    expect(() => parse(configOption(), ['--config', ' '])).toThrow(/'--config <path>' argument ' ' is invalid/);
    expect(parse(configOption(), [])).toEqual({ config: './jobs.yaml' });
    expect(parse(configOption({ optional: true }), [])).toEqual({});
    expect(parse(configOption({ optional: true }), ['--config', 'x.yaml'])).toEqual({ config: 'x.yaml' });
    expect(configOption({ purpose: 'names', optional: true }).description).toBe(
      'names (default: ./jobs.yaml when present)',
    );
  });

  it('has a help text', () => {
    const help = checkConfigCommand().helpInformation();
    expect(help).toContain('check-config');
    expect(help).toContain('--config <path>');
    expect(help).toContain('Validate the jobs file');
  });

  it('formats a summary without streams of one kind', () => {
    const text = formatJobsSummary({
      path: 'jobs.yaml',
      earthquakes: [],
      indicators: [
        {
          name: 'x',
          indicators: ['NY.GDP.MKTP.CD'],
          countries: ['US'],
          fromYear: null,
          toYear: 2020,
          schedule: { kind: 'every', everyMs: 90_000 },
          enabled: true,
        },
      ],
    });
    expect(text).toBe(
      'jobs.yaml: valid, 1 stream (0 earthquake, 1 indicator)\n' +
        '  indicator   x  every 90s  indicators NY.GDP.MKTP.CD  countries US  1 series  years (gateway default start)..2020\n',
    );
  });
});

describe('check-config: tiered streams and the projection', () => {
  it('shows a stream with refresh tiers by its tiers; the top-level jobs.yaml has one', async () => {
    const out = await run(['--config', JOBS_YAML]);
    expect(summaryOf(out)[1]).toBe(
      '  earthquake  global-m2_5  3 refresh tiers         min_magnitude 2.5  worldwide  ' +
        'refresh 2h every 10m | 3d every 6h | 60d cron "0 3 * * 0" UTC  backfill_from 2000-01-01T00:00:00Z',
    );
  });

  it('without DATABASE_URL: runs and windows per tier, the floor of one call per window, and why', async () => {
    const out = await run(['--config', JOBS_YAML]);
    expect(projectionOf(out)).toEqual([
      "Projected billed calls per day (ideal: up to 200 events per call, 31-day windows; a cron pattern's runs are averaged over the next weeks):",
      '  densities unknown: DATABASE_URL is not set; earthquake streams show runs, windows and one call per window at least',
      '  global-m2_5  at least 148.3 calls/day (one per window)',
      '    events 0-2h old    every 10m             144 runs/day × 1 window',
      '    events 2h-3d old   every 6h              4 runs/day × 1 window',
      '    events 3d-60d old  cron "0 3 * * 0" UTC  0.14 runs/day (cron, over 28 days) × 2 windows',
      '  california   at least 288 calls/day (one per window)',
      '    events 0-2d old  cron "*/5 * * * *" UTC  288 runs/day (cron, over 28 days) × 1 window',
      '  macro        1.43 calls/day: 0.14 runs/day (cron, over 28 days) × 10 series × 1 chunk (years 1960..2026)',
      '  total        at least 437.7 calls/day (2 streams of unknown density counted at one call per window)',
    ]);
  });

  it('an empty DATABASE_URL is unset; an invalid one is a note, not an error', async () => {
    expect(projectionOf(await run(['--config', JOBS_YAML], { DATABASE_URL: '' }))[1]).toContain(
      'densities unknown: DATABASE_URL is not set;',
    );
    expect(projectionOf(await run(['--config', JOBS_YAML], { DATABASE_URL: 'mysql://db/x' }))[1]).toBe(
      '  densities unknown: DATABASE_URL: must be a URL with scheme postgres: or postgresql: ' +
        '(e.g. postgres://user:password@host:5432/database); earthquake streams show runs, windows and one call per window at least',
    );
  });

  it('a database that does not answer is a note naming it (password hidden), and the command still succeeds', async () => {
    const started = Date.now();
    const out = await run(['--config', JOBS_YAML], { DATABASE_URL: 'postgres://u:secret@127.0.0.1:1/x' });
    expect(projectionOf(out)[1]).toMatch(
      /^ {2}densities unknown: no answer from PostgreSQL at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/x within 2 s \(.*ECONNREFUSED.*\);/,
    );
    expect(out).not.toContain('secret');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a file without earthquake streams needs no density, so it never asks a database', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'check-config-'));
    try {
      const path = join(dir, 'jobs.yaml');
      const extras = await readFile(fixture('extras.yaml'), 'utf8');
      await writeFile(path, extras.slice(extras.indexOf('indicators:')));
      const out = await run(['--config', path], { DATABASE_URL: 'postgres://u@127.0.0.1:1/x' });
      expect(projectionOf(out)).toEqual([
        "Projected billed calls per day (ideal: up to 200 events per call, 31-day windows; a cron pattern's runs are averaged over the next weeks):",
        '  mortality  0.43 calls/day: 0.14 runs/day × 3 series × 1 chunk (years 1960..2026)',
        '  defaults   0.04 calls/day: 0.04 runs/day (cron, over 28 days) × 1 series × 1 chunk (years 2017..2026)',
        '  total      0.46 calls/day',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('with densities: per tier runs × calls per run (windows, expected events) = calls per day', async () => {
    const jobs = await loadJobsFile(JOBS_YAML, now);
    // 80 events a day matching global-m2_5 over 30 days; nothing stored for california.
    const samples = new Map([
      ['global-m2_5', { events: 2_400, days: 30 }],
      ['california', null],
    ]);
    const saturdayNoon = Date.parse('2026-06-13T12:00:00Z');
    const text = formatProjection(projectStreams(jobs, samples, saturdayNoon), {
      samples,
      source: 'postgres://reader@db:5432/gateway_ingest',
      note: null,
    });
    expect(text.trimEnd().split('\n')).toEqual([
      "Projected billed calls per day (ideal: up to 200 events per call, 31-day windows; a cron pattern's runs are averaged over the next weeks):",
      '  densities: events stored in postgres://reader@db:5432/gateway_ingest matching each stream, last 30 days with data',
      '  global-m2_5  155.4 calls/day, from 80 stored events/day',
      '    events 0-2h old    every 10m             144 runs/day × 1 call (1 window, ~6.67 events) = 144',
      '    events 2h-3d old   every 6h              4 runs/day × 2 calls (1 window, ~233.3 events) = 8',
      '    events 3d-60d old  cron "0 3 * * 0" UTC  0.14 runs/day (cron, over 28 days) × 24 calls (2 windows, ~4,560 events) = 3.43',
      '  california   no events stored for this stream yet: density unknown; at least 288 calls/day (one per window)',
      '    events 0-2d old  cron "*/5 * * * *" UTC  288 runs/day (cron, over 28 days) × 1 window',
      '  macro        1.43 calls/day: 0.14 runs/day (cron, over 28 days) × 10 series × 1 chunk (years 1960..2026)',
      '  total        at least 444.9 calls/day (1 stream of unknown density counted at one call per window)',
    ]);
  });

  it('shows disabled streams, out of the total', async () => {
    const out = await run(['--config', fixture('extras.yaml')]);
    expect(projectionOf(out)).toContain(
      '  tokyo.m4   at least 4 calls/day (one per window)  (disabled: not scheduled, not in the total)',
    );
    expect(projectionOf(out).at(-1)).toBe(
      '  total      at least 2,880 calls/day (1 stream of unknown density counted at one call per window)',
    );
  });
});
