import { redactUrl } from '../../config/env.js';
import { formatDurationMs } from '../../config/durations.js';
import {
  CRON_AVERAGE_DAYS,
  eventsPerDay,
  loadJobsFile,
  projectEarthquakeStream,
  projectIndicatorStream,
  projectionTotal,
  type EarthquakeProjection,
  type EarthquakeStreamConfig,
  type IndicatorProjection,
  type IndicatorStreamConfig,
  type RefreshTier,
  type ResolvedJobsFile,
  type Schedule,
  type StreamProjection,
  type TierProjection,
} from '../../config/jobs-file.js';
import {
  DENSITY_CONNECT_TIMEOUT_MS,
  DENSITY_QUERY_TIMEOUT_MS,
  DENSITY_SAMPLE_DAYS,
  openDensityReader,
  storedDensitySample,
  type StoredDensitySample,
} from '../../db/queries/stream-density.js';
import { LIMITS, yearSpan } from '../../domain/spec.js';
import { toRfc3339 } from '../../domain/time.js';
import { ConfigError } from '../../errors.js';
import { loadEnv } from '../runtime.js';
import { formatSchedule } from '../../service/declared-streams.js';

export interface CheckConfigIo {
  /** Where the summary goes; stdout by default. */
  write?: (text: string) => void;
  /** Clock for "not in the future" and "the current year"; the real clock by default. */
  now?: () => Date;
  /** Where DATABASE_URL is read from (for the densities of the projection); process.env by default. */
  env?: NodeJS.ProcessEnv;
}

/** `check-config`: the file validated, its streams and what each will cost per day. */
export async function runCheckConfig(opts: { config: string }, io: CheckConfigIo = {}): Promise<void> {
  const write = io.write ?? ((text: string) => void process.stdout.write(text));
  const now = io.now ?? (() => new Date());
  const jobs = await loadJobsFile(opts.config, now);
  const densities = await readDensities(jobs, io.env ?? process.env);
  const projections = projectStreams(jobs, densities.samples, now().getTime());
  write(`${formatJobsSummary(jobs)}\n${formatProjection(projections, densities)}`);
}

// ---- Densities: advisory, so any failure becomes a note and never an exit code ----

export interface Densities {
  /** Per earthquake stream name; null when no stored event matches the stream. Empty when `note` is set. */
  samples: Map<string, StoredDensitySample | null>;
  /** Where the samples were read (password redacted), or null. */
  source: string | null;
  /** Why there are no samples, or null. */
  note: string | null;
}

const filtersKey = (s: EarthquakeStreamConfig) => JSON.stringify({ m: s.minMagnitude, c: s.circle });

async function readDensities(jobs: ResolvedJobsFile, env: NodeJS.ProcessEnv): Promise<Densities> {
  const samples = new Map<string, StoredDensitySample | null>();
  if (jobs.earthquakes.length === 0) return { samples, source: null, note: null };
  const raw = env.DATABASE_URL;
  // Unset means "no database here", not the default URL: check-config must work on a laptop with only the file.
  if (raw === undefined || raw === '') {
    return { samples, source: null, note: 'DATABASE_URL is not set' };
  }
  let url: string;
  try {
    url = loadEnv({ DATABASE_URL: raw }).databaseUrl;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return { samples, source: null, note: e.message.split('\n').at(-1)!.trim() };
  }
  const source = redactUrl(url);
  const handle = openDensityReader(url);
  try {
    const byFilters = new Map<string, StoredDensitySample | null>();
    for (const s of jobs.earthquakes) {
      const key = filtersKey(s);
      if (!byFilters.has(key)) {
        byFilters.set(key, await storedDensitySample(handle.db, { minMagnitude: s.minMagnitude, circle: s.circle }));
      }
      samples.set(s.name, byFilters.get(key)!);
    }
    return { samples, source, note: null };
  } catch (e) {
    return { samples: new Map(), source: null, note: densityProblem(e, source) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function densityProblem(error: unknown, source: string): string {
  // Drizzle wraps the driver's error (and its SQLSTATE) with the whole statement: the cause says what happened.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = cause instanceof Error && 'code' in cause ? String(cause.code) : '';
  const message = cause instanceof Error ? cause.message : String(cause);
  if (code === '3D000') return `the database of ${source} does not exist`;
  if (code === '42P01') return `${source} is not migrated (run gateway-ingest migrate)`;
  if (code === '57014') return `counting the stored events took longer than ${DENSITY_QUERY_TIMEOUT_MS / 1000} s`;
  if (/^[0-9A-Z]{5}$/.test(code)) return `PostgreSQL at ${source} refused the density query: ${message}`;
  return `no answer from PostgreSQL at ${source} within ${DENSITY_CONNECT_TIMEOUT_MS / 1000} s (${message})`;
}

export function projectStreams(
  jobs: ResolvedJobsFile,
  samples: ReadonlyMap<string, StoredDensitySample | null>,
  nowMs: number,
): StreamProjection[] {
  return [
    ...jobs.earthquakes.map((s) => projectEarthquakeStream(s, eventsPerDay(samples.get(s.name) ?? null), nowMs)),
    ...jobs.indicators.map((s) => projectIndicatorStream(s, nowMs)),
  ];
}

/** A stream with several tiers names them all; one tier reads like a plain schedule and lookback. */
function tiered(s: EarthquakeStreamConfig): boolean {
  return s.refresh.length > 1;
}

function streamSchedule(s: EarthquakeStreamConfig): string {
  return tiered(s) ? `${s.refresh.length} refresh tiers` : formatSchedule(s.schedule);
}

function earthquakeFilters(s: EarthquakeStreamConfig): string[] {
  const out = [
    s.minMagnitude === null ? 'any magnitude' : `min_magnitude ${s.minMagnitude}`,
    s.circle === null
      ? 'worldwide'
      : `circle ${s.circle.latitude},${s.circle.longitude} radius ${s.circle.radiusKm} km`,
    tiered(s)
      ? `refresh ${s.refresh.map((t) => `${formatDurationMs(t.withinMs)} ${formatSchedule(t.schedule)}`).join(' | ')}`
      : `lookback ${formatDurationMs(s.lookbackMs)}`,
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
  return [`indicators ${s.indicators.join(',')}`, `countries ${s.countries.join(',')}`, `${series} series`, years];
}

/** One line per stream: kind, name, schedule, filters. */
export function formatJobsSummary(jobs: ResolvedJobsFile): string {
  const rows: Array<[string, string, string, string[], boolean]> = [
    ...jobs.earthquakes.map((s): [string, string, string, string[], boolean] => [
      'earthquake',
      s.name,
      streamSchedule(s),
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

// ---- The projection ----

/** Counts to read at a glance: thousands separated, fewer decimals as they grow. */
function formatCount(n: number): string {
  const decimals = n >= 1000 ? 0 : n >= 10 ? 1 : 2;
  return n.toLocaleString('en-US', { maximumFractionDigits: decimals });
}

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** A cron pattern's runs a day are an average over the coming weeks, and the label says so. */
function runs(n: number, schedule: Schedule): string {
  return `${plural(n, 'run')}/day${schedule.kind === 'every' ? '' : ` (cron, over ${CRON_AVERAGE_DAYS} days)`}`;
}

/** `events 2h-3d old`: the band of event ages one tier re-reads. */
function band(tier: RefreshTier): string {
  const from = tier.fromMs === 0 ? '0' : formatDurationMs(tier.fromMs);
  return `events ${from}-${formatDurationMs(tier.withinMs)} old`;
}

function tierRows(tiers: readonly TierProjection[]): string[] {
  const cells = tiers.map((t) => {
    const perDay = runs(t.runsPerDay, t.tier.schedule);
    const windows = plural(t.windowsPerRun, 'window');
    const cost =
      t.callsPerRun === null || t.callsPerDay === null || t.eventsPerRun === null
        ? `${perDay} × ${windows}`
        : `${perDay} × ${plural(t.callsPerRun, 'call')} (${windows}, ~${plural(t.eventsPerRun, 'event')}) ` +
          `= ${formatCount(t.callsPerDay)}`;
    return [band(t.tier), formatSchedule(t.tier.schedule), cost];
  });
  const widths = [0, 1].map((i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => `    ${c[0]!.padEnd(widths[0]!)}  ${c[1]!.padEnd(widths[1]!)}  ${c[2]}`);
}

function earthquakeRows(p: EarthquakeProjection, densities: Densities): string[] {
  let head: string;
  if (p.callsPerDay !== null && p.eventsPerDay !== null) {
    head = `${formatCount(p.callsPerDay)} calls/day, from ${formatCount(p.eventsPerDay)} stored events/day`;
  } else {
    const floor = `at least ${formatCount(p.minCallsPerDay)} calls/day (one per window)`;
    // Without a database there is nothing to say about this stream's events; with one, say none matched.
    head = densities.note !== null ? floor : `no events stored for this stream yet: density unknown; ${floor}`;
  }
  return [head, ...tierRows(p.tiers)];
}

function indicatorRow(p: IndicatorProjection): string {
  const years = `years ${p.years.fromYear}..${p.years.toYear}`;
  return (
    `${formatCount(p.callsPerDay)} calls/day: ${runs(p.runsPerDay, p.schedule)} ` +
    `× ${plural(p.series, 'series', 'series')} ` +
    `× ${plural(p.chunksPerSeries, 'chunk')} (${years})`
  );
}

/**
 * Per stream, its projected billed calls per day; per earthquake tier, runs × calls per run. Runs of
 * a cron pattern are averaged over the coming weeks. Disabled streams are shown but left out of the total.
 */
export function formatProjection(projections: readonly StreamProjection[], densities: Densities): string {
  const lines = [
    `Projected billed calls per day (ideal: up to ${LIMITS.maxResultsCeiling} events per call, ` +
      `${LIMITS.maxWindowDays}-day windows; a cron pattern's runs are averaged over the next weeks):`,
  ];
  if (densities.note !== null) {
    lines.push(
      `  densities unknown: ${densities.note}; earthquake streams show runs, windows and one call per window at least`,
    );
  } else if (densities.source !== null) {
    lines.push(
      `  densities: events stored in ${densities.source} matching each stream, ` +
        `last ${DENSITY_SAMPLE_DAYS} days with data`,
    );
  }
  const nameWidth = Math.max('total'.length, ...projections.map((p) => p.name.length));
  for (const p of projections) {
    const disabled = p.enabled ? '' : '  (disabled: not scheduled, not in the total)';
    const [head, ...rest] = p.kind === 'earthquake' ? earthquakeRows(p, densities) : [indicatorRow(p)];
    lines.push(`  ${p.name.padEnd(nameWidth)}  ${head}${disabled}`, ...rest);
  }
  const total = projectionTotal(projections);
  const unknown =
    total.unknownStreams === 0
      ? ''
      : ` (${plural(total.unknownStreams, 'stream')} of unknown density counted at one call per window)`;
  lines.push(
    `  ${'total'.padEnd(nameWidth)}  ${total.unknownStreams === 0 ? '' : 'at least '}` +
      `${formatCount(total.callsPerDay)} calls/day${unknown}`,
  );
  return `${lines.join('\n')}\n`;
}
