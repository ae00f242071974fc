import { Command, Option } from 'commander';
import { formatDurationMs } from '../../config/durations.js';
import {
  DEFAULT_JOBS_FILE,
  loadJobsFile,
  type EarthquakeStreamConfig,
  type IndicatorStreamConfig,
  type ResolvedJobsFile,
  type Schedule,
} from '../../config/jobs-file.js';
import { yearSpan } from '../../gateway/schemas.js';
import { toRfc3339 } from '../../gateway/time.js';

/** `--config PATH`, shared by every command that reads jobs.yaml (`check-config`, `start`, `backfill`). */
export function configOption(): Option {
  return new Option('--config <path>', 'jobs file declaring the streams to ingest').default(DEFAULT_JOBS_FILE);
}

export interface CheckConfigIo {
  /** Where the summary goes; stdout by default. */
  write?: (text: string) => void;
  /** Clock for "not in the future" and "the current year"; the real clock by default. */
  now?: () => Date;
}

export function checkConfigCommand(io: CheckConfigIo = {}): Command {
  const write = io.write ?? ((text: string) => void process.stdout.write(text));
  return new Command('check-config')
    .description(
      'Validate the jobs file (every rule of the gateway spec is checked) and print the streams it declares. ' +
        'Every problem is listed as "file:line  path: reason"; an invalid file exits with code 2.',
    )
    .addOption(configOption())
    .addHelpText('after', '\nThe format of the jobs file is described in README.md, section "jobs.yaml".')
    .action(async (opts: { config: string }) => {
      const jobs = await loadJobsFile(opts.config, io.now);
      write(formatJobsSummary(jobs));
    });
}

export function formatSchedule(schedule: Schedule): string {
  if (schedule.kind === 'every') return `every ${formatDurationMs(schedule.everyMs)}`;
  return `cron "${schedule.pattern}" ${schedule.timezone ?? 'UTC'}`;
}

function earthquakeFilters(s: EarthquakeStreamConfig): string[] {
  const out = [
    s.minMagnitude === null ? 'any magnitude' : `min_magnitude ${s.minMagnitude}`,
    s.circle === null
      ? 'worldwide'
      : `circle ${s.circle.latitude},${s.circle.longitude} radius ${s.circle.radiusKm} km`,
    `lookback ${formatDurationMs(s.lookbackMs)}`,
  ];
  if (s.backfillFrom !== null) out.push(`backfill_from ${toRfc3339(s.backfillFrom.getTime())}`);
  return out;
}

function indicatorFilters(s: IndicatorStreamConfig): string[] {
  const series = s.indicators.length * s.countries.length;
  let years: string;
  if (s.fromYear === null && s.toYear === null) years = 'years: gateway default (latest 10)';
  else if (s.fromYear === null) years = `years (gateway default start)..${s.toYear}`;
  else if (s.toYear === null) years = `years ${s.fromYear}..current`;
  else years = `years ${s.fromYear}..${s.toYear} (${yearSpan(s.fromYear, s.toYear)})`;
  return [
    `indicators ${s.indicators.join(',')}`,
    `countries ${s.countries.join(',')}`,
    `${series} series`,
    years,
  ];
}

/** One line per stream: kind, name, schedule, filters. */
export function formatJobsSummary(jobs: ResolvedJobsFile): string {
  const rows: Array<[string, string, string, string[], boolean]> = [
    ...jobs.earthquakes.map((s): [string, string, string, string[], boolean] => [
      'earthquake',
      s.name,
      formatSchedule(s.schedule),
      earthquakeFilters(s),
      s.enabled,
    ]),
    ...jobs.indicators.map((s): [string, string, string, string[], boolean] => [
      'indicator',
      s.name,
      formatSchedule(s.schedule),
      indicatorFilters(s),
      s.enabled,
    ]),
  ];
  const disabled = rows.filter((r) => !r[4]).length;
  const nameWidth = Math.max(0, ...rows.map((r) => r[1].length));
  const scheduleWidth = Math.max(0, ...rows.map((r) => r[2].length));
  const header =
    `${jobs.path}: valid, ${rows.length} stream${rows.length === 1 ? '' : 's'} ` +
    `(${jobs.earthquakes.length} earthquake, ${jobs.indicators.length} indicator` +
    `${disabled > 0 ? `, ${disabled} disabled` : ''})`;
  const lines = rows.map(([kind, name, schedule, filters, enabled]) =>
    [
      `  ${kind.padEnd(10)}`,
      name.padEnd(nameWidth),
      schedule.padEnd(scheduleWidth),
      filters.join('  ') + (enabled ? '' : '  (disabled: not scheduled)'),
    ].join('  '),
  );
  return `${[header, ...lines].join('\n')}\n`;
}
