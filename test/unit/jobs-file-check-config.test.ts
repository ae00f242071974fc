import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit.js';
import { checkConfigCommand, configOption, formatJobsSummary } from '../../src/cli/commands/check-config.js';
import { JobsFileError } from '../../src/config/jobs-file.js';

const now = () => new Date('2026-06-15T12:00:00Z');
const fixture = (name: string) => join(import.meta.dirname, '../fixtures/jobs', name);

async function run(args: string[]): Promise<string> {
  let out = '';
  const program = new Command('gateway-ingest').exitOverride();
  program.addCommand(checkConfigCommand({ write: (text) => (out += text), now }));
  await program.parseAsync(['check-config', ...args], { from: 'user' });
  return out;
}

describe('check-config', () => {
  it('prints one line per stream: kind, name, schedule, filters', async () => {
    const out = await run(['--config', fixture('example.yaml')]);
    const lines = out.trimEnd().split('\n');
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
