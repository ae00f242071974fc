/**
 * A user's journey through the real pipeline: one database, one queue prefix and one emulator kept
 * across steps, each step a CLI command run as a user runs it. After each step: what it billed
 * against the ideal of the windows it read (Σ max(1, ⌈n/cap⌉) over the step's partitions, n counted
 * in the emulator's catalog with the stream's filters), the cap probes among them, how its windows
 * ended, and the catalog events missing from the table over the stream's proven coverage. Used by
 * the journey tests and by `npm run bench:journeys`; it reads no vitest state.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropDatabase, runMigrations } from '../../src/db/migrate.js';
import { haversineKm } from '../../src/domain/geo.js';
import { magnitudeFloor, type EarthquakeFilters } from '../../src/domain/filters.js';
import { earthquakeStreamParamsSchema, filtersOfParams } from '../../src/domain/streams.js';
import { packageRoot } from '../../src/paths.js';
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '@gateway-ingest/emulator';
import { rollupDrift } from './rollups.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';

export interface StepFigures {
  label: string;
  exit: number | null;
  billed: number;
  probes: number;
  ideal: number;
  windows: number;
  done: number;
  partial: number;
  failed: number;
  /** Catalog events of the step's streams missing from the table over their proven coverage. */
  lost: number;
  /** Rows where a maintained roll-up differs from a recount (test/support/rollups.ts): none, ever. */
  drift: string[];
  stdout: string;
  stderr: string;
}

export interface JourneyOptions {
  serverUrl: string;
  redisUrl: string;
  emulator: RunningEmulator;
  key: string;
  /** Added to every step's environment (GATEWAY_KNOWLEDGE_TTL_MS, WORKER_CONCURRENCY, ...). */
  env?: Record<string, string>;
  /** The gateway's real cap, for the ideal: 200 unless it caps lower. */
  cap?: number;
  /** The CLI entry: the current build by default; an older release's bin for an upgrade. */
  bin?: string;
  stepTimeoutMs?: number;
}

export interface Journey {
  dbUrl: string;
  prefix: string;
  pool: pg.Pool;
  /** Runs `gateway-ingest <args>` and measures it. */
  step(label: string, args: string[], options?: { bin?: string; env?: Record<string, string> }): Promise<StepFigures>;
  /**
   * Stands for more than GATEWAY_KNOWLEDGE_TTL_MS passing: what was learned of the gateway lapses, aged
   * in the table rather than waited out with a short TTL (which would lapse within a step too).
   */
  lapse(): Promise<void>;
  /** Runs a command without measuring it (migrate, status). */
  run(args: string[], options?: { bin?: string; env?: Record<string, string> }): Promise<CliResult>;
  close(): Promise<void>;
}

export interface CliResult {
  exit: number | null;
  stdout: string;
  stderr: string;
}

function cli(bin: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: packageRoot, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === 'number' ? error.code : error ? null : 0;
        resolve({ exit: code, stdout, stderr });
      },
    );
  });
}

export function matches(e: EarthquakeEvent, f: EarthquakeFilters): boolean {
  if (f.minMagnitude !== null && (e.magnitude === null || e.magnitude < magnitudeFloor(f.minMagnitude))) return false;
  if (
    f.circle !== null &&
    haversineKm(f.circle.latitude, f.circle.longitude, e.latitude, e.longitude) > f.circle.radiusKm
  )
    return false;
  return true;
}

interface StepPartition {
  streamKey: string;
  start: Date;
  end: Date;
  state: string;
  params: unknown;
}

export async function startJourney(o: JourneyOptions): Promise<Journey> {
  const name = `gi_journey_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(o.serverUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  await runMigrations(dbUrl);
  const pool = new pg.Pool({ connectionString: dbUrl, max: 2 });
  // `pool.end()` resolves before its clients' sockets are closed, and the drop at `close()` ends
  // their backends (57P01): an ending client emits that on itself, and an idle one's pool passes it
  // on to the pool's own listeners; unheard on either, it is an uncaught exception that fails the run.
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  const prefix = `gi-journey-${randomBytes(4).toString('hex')}`;
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_URL: o.redisUrl,
    QUEUE_PREFIX: prefix,
    GATEWAY_BASE_URL: o.emulator.url,
    MARKET_KEY: o.key,
    LOG_LEVEL: 'warn',
    ...o.env,
  };
  const bin = o.bin ?? 'bin/gateway-ingest.js';
  const timeoutMs = o.stepTimeoutMs ?? 300_000;
  const run = (args: string[], options: { bin?: string; env?: Record<string, string> } = {}) =>
    cli(options.bin ?? bin, args, { ...env, ...options.env }, timeoutMs);

  const partitionsOf = async (backfillId: string): Promise<StepPartition[]> => {
    const { rows } = await pool.query<StepPartition>(
      `select p.stream_key as "streamKey", p.window_start as start, p.window_end as "end", p.state, s.params
       from ingest_partitions p join ingest_streams s using (stream_key)
       where p.backfill_id = $1 and p.operation = 'earthquake'`,
      [backfillId],
    );
    return rows;
  };

  const filtersOf = (params: unknown): EarthquakeFilters => filtersOfParams(earthquakeStreamParamsSchema.parse(params));

  const lostIn = async (streams: Map<string, EarthquakeFilters>): Promise<number> => {
    const catalog = o.emulator.currentEvents();
    let lost = 0;
    for (const [streamKey, filters] of streams) {
      const { rows: proofs } = await pool.query<{ lo: string; hi: string }>(
        'select lo, hi from coverage_proofs where stream_key = $1',
        [streamKey],
      );
      const { rows } = await pool.query<{ id: string }>('select id from earthquake_events where deleted_at is null');
      const stored = new Set(rows.map((r) => r.id));
      const proven = proofs.map((p) => ({ lo: Number(p.lo), hi: Number(p.hi) }));
      lost += catalog.filter((e) => {
        const t = Date.parse(e.time);
        return matches(e, filters) && proven.some((p) => t >= p.lo && t <= p.hi) && !stored.has(e.id);
      }).length;
    }
    return lost;
  };

  return {
    dbUrl,
    prefix,
    pool,
    run,
    async lapse() {
      await pool.query(
        `update gateway_knowledge set cap_seen_at = cap_seen_at - interval '30 days',
           probed_at = probed_at - interval '30 days', recounted_at = recounted_at - interval '30 days'`,
      );
    },
    async step(label, args, options = {}) {
      const startedAt = new Date();
      const r = await run(args, options);
      const { rows: billedRows } = await pool.query<{ billed: number; probes: number }>(
        `select count(*) filter (where billed)::int as billed,
           count(*) filter (where billed and call_purpose = 'cap-probe')::int as probes
         from gateway_executions where started_at >= $1`,
        [startedAt],
      );
      const { rows: bf } = await pool.query<{ id: string }>(
        'select id from backfills where created_at >= $1 order by created_at desc limit 1',
        [startedAt],
      );
      const parts = bf[0] ? await partitionsOf(bf[0].id) : [];
      const catalog = o.emulator.currentEvents();
      const cap = o.cap ?? 200;
      const streams = new Map(parts.map((p) => [p.streamKey, filtersOf(p.params)]));
      const ideal = parts.reduce((sum, p) => {
        const f = filtersOf(p.params);
        const n = catalog.filter((e) => {
          const t = Date.parse(e.time);
          return t >= p.start.getTime() && t <= p.end.getTime() && matches(e, f);
        }).length;
        return sum + Math.max(1, Math.ceil(n / cap));
      }, 0);
      const count = (state: string) => parts.filter((p) => p.state === state).length;
      return {
        label,
        exit: r.exit,
        billed: billedRows[0]?.billed ?? 0,
        probes: billedRows[0]?.probes ?? 0,
        ideal,
        windows: parts.length,
        done: count('done'),
        partial: count('partial'),
        failed: count('failed'),
        lost: await lostIn(streams),
        drift: await rollupDrift(pool),
        stdout: r.stdout,
        stderr: r.stderr,
      };
    },
    async close() {
      await pool.end();
      await dropDatabase(dbUrl);
    },
  };
}

/** One line per step: what it billed against its ideal, and how its windows ended. */
export function stepLine(s: StepFigures): string {
  const ratio = s.ideal > 0 ? (s.billed / s.ideal).toFixed(2) : '-';
  return (
    `| ${s.label} | ${s.windows} | ${s.done}/${s.partial}/${s.failed} | ${s.billed} | ${s.probes} | ${s.ideal} | ` +
    `${ratio} | ${s.lost} | ${s.exit} |`
  );
}

export const STEP_HEADER =
  '| step | windows | done/partial/failed | billed | probes | ideal | billed/ideal | lost | exit |\n' +
  '|---|---|---|---|---|---|---|---|---|';

/** `backfill earthquakes --from .. --to .. --yes --wait --inline` and `more` flags. */
export function earthquakeBackfill(from: string, to: string, ...more: string[]): string[] {
  return ['backfill', 'earthquakes', '--from', from, '--to', to, '--yes', '--wait', '--inline', ...more];
}

/** A journey on its own database against a new emulator with `options`; `stop` ends both. */
export async function openJourney(
  o: Omit<JourneyOptions, 'emulator'> & { emulator: EmulatorOptions },
): Promise<Journey & { emulator: RunningEmulator; stop(): Promise<void> }> {
  const emulator = await startEmulator(o.emulator);
  const j = await startJourney({ ...o, emulator });
  return {
    ...j,
    emulator,
    async stop() {
      await j.close();
      await emulator.close();
    },
  };
}
