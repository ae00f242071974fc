/**
 * The performance benchmark, measured side by side in one run and printed as a table.
 * Asserts nothing (not a test). The gateway emulator runs as a separate process (the product's own
 * `gateway-ingest emulator`), serving the real month tiled over `--months`; the backfills run as a
 * user runs them, `gateway-ingest backfill earthquakes ... --wait --inline`, each into a fresh database
 * and queue prefix that are dropped afterwards.
 *
 *   npm run bench -- [--months 12] [--skip-latency] [--markdown] [--profile DIR]
 *                    [--latency-ms 200] [--concurrency 16] [--years 50] [--node-options='--max-semi-space-size=2']
 *
 * Measurements: (1) direct upsert of the same rows in 200-row batches on one connection; (2) the CLI
 * backfill at zero latency (wall, events/s, ratio to the direct rate, peak RSS, CPU of every process
 * involved, Redis memory and keys left); (3) the same at `--latency-ms` with WORKER_CONCURRENCY
 * `--concurrency` (wall against the ideal calls x latency / concurrency, longest window chain);
 * (4) plan and enqueue of `--years` of windows, in this process around the product function.
 * `--profile DIR` adds a zero-latency run under `node --cpu-prof` and prints where its CPU time goes;
 * `--node-options` are given to the CLI processes only (memory experiments).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import type { JobsOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '../src/config/env.js';
import { openDb } from '../src/db/connection.js';
import { eventRows, upsertEvents } from '../src/db/earthquake-events.js';
import { dropDatabase, runMigrations } from '../src/db/migrate.js';
import { recordPlanned } from '../src/db/partitions.js';
import { upsertStream } from '../src/db/streams.js';
import { PARTITION_STATE } from '../src/domain/partition.js';
import { earthquakeStream } from '../src/domain/streams.js';
import { CatalogIndex, loadUsgsFile } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../src/gateway/schemas.js';
import { enqueueEarthquakeBackfill } from '../src/ingest/enqueue-backfill.js';
import { planWindows } from '../src/planning/windows.js';
import { earthquakeWork } from '../src/planning/work.js';
import { enqueueJobs } from '../src/queue/enqueue.js';
import { closeQueue, openQueue } from '../src/queue/queues.js';
import { openRedis } from '../src/queue/redis.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { packageRoot } from '../src/paths.js';

const MONTH_FILE = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const CLI = join(packageRoot, 'bin', 'gateway-ingest.js');
/** The real month's first event: tile 0 is the real catalog at its real times. */
const FROM_MS = Date.parse('2025-05-06T09:24:12Z');
const DAY_MS = 86_400_000;
const BATCH = 200;
const CLK_TCK = 100;

const { values: opts } = parseArgs({
  options: {
    months: { type: 'string', default: '12' },
    'skip-latency': { type: 'boolean', default: false },
    markdown: { type: 'boolean', default: false },
    profile: { type: 'string' },
    'latency-ms': { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '16' },
    years: { type: 'string', default: '50' },
    'node-options': { type: 'string', default: '' },
  },
  strict: true,
});
const months = Number(opts.months);
const latencyMs = Number(opts['latency-ms']);
const latencyConcurrency = Number(opts.concurrency);
const planYears = Number(opts.years);
for (const [flag, n] of [
  ['--months', months],
  ['--latency-ms', latencyMs],
  ['--concurrency', latencyConcurrency],
  ['--years', planYears],
] as const) {
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`${flag}: expected a positive number`);
}
const TO_MS = FROM_MS + Math.round(months * 30.4 * DAY_MS);
const baseDbUrl = process.env['DATABASE_URL'] || DEFAULT_DATABASE_URL;
const redisUrl = process.env['REDIS_URL'] || DEFAULT_REDIS_URL;
const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const key = randomBytes(12).toString('hex');
const childNodeOptions = opts['node-options'].split(/\s+/).filter(Boolean);
const say = (line: string): void => void process.stderr.write(`[bench] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// Small helpers: /proc, throwaway databases, Redis figures

function procStat(pid: number): { cpuS: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { cpuS: (Number(f[11]) + Number(f[12])) / CLK_TCK };
  } catch {
    return null;
  }
}

function procMemMiB(pid: number): { hwm: number; rss: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

/** CPU seconds of the PostgreSQL backends serving one database (backends come and go: tracked per pid). */
class BackendCpu {
  private readonly seen = new Map<number, { first: number; last: number }>();
  private readonly other = new Set<number>();
  constructor(private readonly dbName: string) {}
  sample(): void {
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || this.other.has(pid)) continue;
      let entry = this.seen.get(pid);
      if (!entry) {
        let cmd = '';
        try {
          cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        // A backend just forked still shows the postmaster's command line: only non-postgres pids are ruled out for good.
        if (!cmd.includes('postgres')) this.other.add(pid);
        if (!cmd.startsWith('postgres:') || !cmd.includes(` ${this.dbName} `)) continue;
        entry = { first: 0, last: 0 };
        this.seen.set(pid, entry);
      }
      const s = procStat(pid);
      if (s) entry.last = Math.max(entry.last, s.cpuS);
    }
  }
  seconds(): number {
    return [...this.seen.values()].reduce((n, e) => n + e.last - e.first, 0);
  }
}

async function freshDatabase(label: string): Promise<string> {
  const url = new URL(baseDbUrl);
  url.pathname = `/gateway_ingest_bench_${runId}_${label}`;
  await runMigrations(url.toString());
  return url.toString();
}

const dbNameOf = (url: string): string => decodeURIComponent(new URL(url).pathname.slice(1));

interface RedisFigures {
  usedMemory: number;
  keys: number;
  /** MEMORY USAGE summed over the keys under the prefix. */
  bytes: number;
  /** Mean MEMORY USAGE of one retained completed job's hash (what retention multiplies). */
  completedJobBytes: number;
  cpuS: number;
}

async function redisFigures(redis: Redis, prefix: string): Promise<RedisFigures> {
  const info = await redis.info();
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const sizes = await Promise.all(keys.map(async (k) => Number((await redis.memory('USAGE', k)) ?? 0)));
  const completed = new Set<string>();
  for (const k of keys.filter((k) => k.endsWith(':completed'))) {
    for (const id of await redis.zrange(k, 0, -1)) completed.add(`${k.slice(0, -':completed'.length)}:${id}`);
  }
  const jobSizes = keys.flatMap((k, i) => (completed.has(k) ? [sizes[i]!] : []));
  return {
    usedMemory: field('used_memory'),
    keys: keys.length,
    bytes: sizes.reduce((a, b) => a + b, 0),
    completedJobBytes: jobSizes.length > 0 ? jobSizes.reduce((a, b) => a + b, 0) / jobSizes.length : 0,
    cpuS: field('used_cpu_sys') + field('used_cpu_user'),
  };
}

/** Removes every key under the prefix (BullMQ queues included). */
async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (found.length > 0) await redis.unlink(...found);
  } while (cursor !== '0');
}

function waitExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await waitExit(child);
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------
// The emulator, in its own process

interface EmulatorProcess {
  url: string;
  pid: number;
  child: ChildProcess;
}

async function startEmulatorProcess(latency: number): Promise<EmulatorProcess> {
  const args = [
    CLI,
    'emulator',
    '--port',
    '0',
    '--catalog',
    MONTH_FILE,
    '--tile-from',
    new Date(FROM_MS).toISOString(),
    '--tile-to',
    new Date(TO_MS).toISOString(),
    '--order',
    'newest',
    '--seed',
    '1',
    '--latency-ms',
    String(latency),
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, MARKET_KEY: key, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`emulator did not start within 60 s: ${stderr}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`emulator exited ${code}: ${stderr}`));
    });
  });
  return { url, pid: child.pid!, child };
}

// ---------------------------------------------------------------------------------------------
// Measurements

interface Catalog {
  index: CatalogIndex;
  events: number;
}

async function loadCatalog(): Promise<Catalog> {
  const index = new CatalogIndex(await loadUsgsFile(MONTH_FILE), { from: new Date(FROM_MS), to: new Date(TO_MS) });
  return { index, events: index.count({ startMs: FROM_MS, endMs: TO_MS }) };
}

interface DirectResult {
  events: number;
  seconds: number;
  rate: number;
  /** CPU seconds of this process and of the database's backend while upserting. */
  cpu: { node: number; postgres: number };
}

/** Times `write(batch)` over the catalog's rows in 200-row batches on one connection of a fresh database. */
async function timedBatches(
  catalog: Catalog,
  label: string,
  write: (handle: ReturnType<typeof openDb>, batch: EarthquakeEvent[], seenAt: Date) => Promise<void>,
): Promise<DirectResult> {
  const url = await freshDatabase(label);
  const handle = openDb(url, { max: 1 });
  const backends = new BackendCpu(dbNameOf(url));
  try {
    const events = catalog.index.query({ startMs: FROM_MS, endMs: TO_MS });
    await handle.pool.query('select 1');
    backends.sample();
    const sampler = setInterval(() => backends.sample(), 250);
    const seenAt = new Date();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    try {
      for (let i = 0; i < events.length; i += BATCH) await write(handle, events.slice(i, i + BATCH), seenAt);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    backends.sample();
    return {
      events: events.length,
      seconds,
      rate: events.length / seconds,
      cpu: { node: (cpu.user + cpu.system) / 1e6, postgres: backends.seconds() },
    };
  } finally {
    await handle.close();
    await dropDatabase(url);
  }
}

/** The product's own row mapping and upsert (db/earthquake-events.ts), one transaction per batch. */
function directUpsert(catalog: Catalog): Promise<DirectResult> {
  return timedBatches(catalog, 'direct', async (handle, batch, seenAt) => {
    await handle.db.transaction((tx) => upsertEvents(tx, eventRows(batch, seenAt, 0)));
  });
}

/**
 * Reference only, not product code: the same upsert (same columns, conflict rule and revised_at
 * rule) as one statement of 12 array parameters through unnest, sent by pg directly. It shows what
 * the database takes when the statement is not built per batch by the query builder.
 */
const RAW_UPSERT = `
insert into earthquake_events (id, time, magnitude, magnitude_type, place, latitude, longitude, depth_km, tsunami_flag, url, first_seen_at, last_seen_at, revised_at, last_execution_id)
select u.id, u.time, u.magnitude, u.magnitude_type, u.place, u.latitude, u.longitude, u.depth_km, u.tsunami_flag, u.url, $11, $11, null, $12
from unnest($1::text[], $2::timestamptz[], $3::float8[], $4::text[], $5::text[], $6::float8[], $7::float8[], $8::float8[], $9::bool[], $10::text[])
  as u(id, time, magnitude, magnitude_type, place, latitude, longitude, depth_km, tsunami_flag, url)
on conflict (id) do update set
  time = excluded.time, magnitude = excluded.magnitude, magnitude_type = excluded.magnitude_type, place = excluded.place,
  latitude = excluded.latitude, longitude = excluded.longitude, depth_km = excluded.depth_km, tsunami_flag = excluded.tsunami_flag,
  url = excluded.url, last_seen_at = excluded.last_seen_at, last_execution_id = excluded.last_execution_id,
  revised_at = case when (earthquake_events.time, earthquake_events.magnitude, earthquake_events.magnitude_type, earthquake_events.place,
      earthquake_events.latitude, earthquake_events.longitude, earthquake_events.depth_km, earthquake_events.tsunami_flag, earthquake_events.url)
    is distinct from (excluded.time, excluded.magnitude, excluded.magnitude_type, excluded.place, excluded.latitude, excluded.longitude,
      excluded.depth_km, excluded.tsunami_flag, excluded.url) then excluded.last_seen_at else earthquake_events.revised_at end
returning (xmax = 0) or revised_at = last_seen_at as written`;

function rawUpsert(catalog: Catalog): Promise<DirectResult> {
  return timedBatches(catalog, 'raw', async (handle, batch, seenAt) => {
    const rows = eventRows(batch, seenAt, 0);
    const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
    const client = await handle.pool.connect();
    try {
      await client.query('begin');
      await client.query({
        name: 'bench-raw-upsert',
        text: RAW_UPSERT,
        values: [
          col('id'),
          col('time'),
          col('magnitude'),
          col('magnitudeType'),
          col('place'),
          col('latitude'),
          col('longitude'),
          col('depthKm'),
          col('tsunamiFlag'),
          col('url'),
          seenAt,
          0,
        ],
      });
      await client.query('commit');
    } finally {
      client.release();
    }
  });
}

interface E2eResult {
  label: string;
  concurrency: number;
  latencyMs: number;
  exitCode: number | null;
  /** Spawn to exit, spawn to the `finished:` line, spawn to the `planned` line. */
  wallS: number;
  finishedS: number | null;
  plannedS: number | null;
  firstCallS: number | null;
  lastAnswerS: number | null;
  events: number;
  lost: number;
  windows: number;
  windowsDone: number;
  calls: number;
  billed: number;
  billedUnknown: number;
  probes: number;
  ideal: number;
  meanCallMs: number;
  chain: WindowCalls | null;
  peakRssMiB: number;
  cpu: { cli: number; emulator: number; postgres: number; redis: number };
  redis: {
    beforeBytes: number;
    afterBytes: number;
    keysAfter: number;
    bytesUnderPrefix: number;
    completedJobBytes: number;
  };
  /** Transactions committed and rows inserted / updated per table in the run's database. */
  pg: { commits: number; tables: Array<{ table: string; inserted: number; updated: number }> };
  stderrLines: number;
  profileFile: string | null;
}

/** Polls until no window is left to run, then stops the worker (SIGTERM) and returns its exit code. */
async function untilWindowsEnd(db: ReturnType<typeof openDb>['db'], worker: ChildProcess): Promise<number | null> {
  const exited = waitExit(worker);
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    if (gone) return exited;
    const [row] = (
      await db.execute<{ open: number; total: number }>(
        sql`select count(*) filter (where state not in (${PARTITION_STATE.done}, ${PARTITION_STATE.partial}, ${PARTITION_STATE.failed}))::int as open, count(*)::int as total from ingest_partitions`,
      )
    ).rows;
    if (row && row.total > 0 && row.open === 0) break;
  }
  worker.kill('SIGTERM');
  return exited;
}

/**
 * `inline`: `backfill --wait --inline`, one process plans, enqueues, runs the windows and waits.
 * `worker`: `backfill` enqueues and exits, then one `worker` process runs every window: the process
 * an operator deploys, measured alone until the last window is done.
 */
type E2eMode = 'inline' | 'worker';

async function endToEnd(
  label: string,
  catalog: Catalog,
  emulator: EmulatorProcess,
  o: { concurrency: number | null; latencyMs: number; profileDir?: string; mode?: E2eMode },
): Promise<E2eResult> {
  const mode = o.mode ?? 'inline';
  const url = await freshDatabase(label);
  const prefix = `bench-${runId}-${label}`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const handle = openDb(url, { max: 2 });
  const backends = new BackendCpu(dbNameOf(url));
  let child: ChildProcess | null = null;
  try {
    const before = await redisFigures(redis, prefix);
    const emulatorCpu0 = procStat(emulator.pid)?.cpuS ?? 0;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: url,
      REDIS_URL: redisUrl,
      GATEWAY_BASE_URL: emulator.url,
      MARKET_KEY: key,
      QUEUE_PREFIX: prefix,
    };
    delete env['WORKER_CONCURRENCY'];
    // Plain node, as the issue of memory is measured: no limits, and nothing this runner was started with.
    delete env['NODE_OPTIONS'];
    if (o.concurrency !== null) env['WORKER_CONCURRENCY'] = String(o.concurrency);
    const nodeArgs = [
      ...childNodeOptions,
      ...(o.profileDir
        ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`, `--cpu-prof-name=${label}-${runId}.cpuprofile`]
        : []),
    ];
    const range = ['--from', new Date(FROM_MS).toISOString(), '--to', new Date(TO_MS).toISOString()];
    if (mode === 'worker') {
      const enqueued = await timedCli(['backfill', 'earthquakes', ...range, '--yes'], env);
      if (enqueued.exitCode !== 0) say(`${label}: enqueue exited ${enqueued.exitCode}: ${enqueued.stdout.trim()}`);
    }
    const args =
      mode === 'worker'
        ? [...nodeArgs, CLI, 'worker']
        : [...nodeArgs, CLI, 'backfill', 'earthquakes', ...range, '--wait', '--inline'];
    const t0 = Date.now();
    child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid!;
    let plannedS: number | null = null;
    let finishedS: number | null = null;
    let out = '';
    let stderrLines = 0;
    let stderrTail = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (plannedS === null && /partitions planned/.test(out)) plannedS = (Date.now() - t0) / 1000;
      if (finishedS === null && /^finished:/m.test(out)) finishedS = (Date.now() - t0) / 1000;
    });
    child.stderr!.on('data', (d: Buffer) => {
      const s = d.toString();
      stderrLines += s.split('\n').length - 1;
      stderrTail = (stderrTail + s).slice(-2000);
    });
    let peak = 0;
    let cliCpu = 0;
    const sample = () => {
      const m = procMemMiB(pid);
      if (m) peak = Math.max(peak, m.hwm, m.rss);
      const s = procStat(pid);
      if (s) cliCpu = Math.max(cliCpu, s.cpuS);
      backends.sample();
    };
    const sampler = setInterval(sample, 50);
    const exitCode = mode === 'worker' ? await untilWindowsEnd(handle.db, child) : await waitExit(child);
    clearInterval(sampler);
    const wallS = (Date.now() - t0) / 1000;
    backends.sample();
    const after = await redisFigures(redis, prefix);
    const emulatorCpu = (procStat(emulator.pid)?.cpuS ?? emulatorCpu0) - emulatorCpu0;
    if (exitCode !== 0) say(`${label}: backfill exited ${exitCode}; stdout: ${out.trim()}; stderr tail: ${stderrTail}`);

    const db = handle.db;
    const windows = (
      await db.execute<{ partition_key: string; s: string; e: string; state: string }>(
        sql`select partition_key, (extract(epoch from window_start) * 1000)::bigint::text as s, (extract(epoch from window_end) * 1000)::bigint::text as e, state from ingest_partitions`,
      )
    ).rows;
    const ideal = windows.reduce(
      (n, w) => n + Math.max(1, Math.ceil(catalog.index.count({ startMs: Number(w.s), endMs: Number(w.e) }) / BATCH)),
      0,
    );
    const [counts] = (
      await db.execute<{ events: number; inside: number }>(
        sql`select count(*)::int as events, count(*) filter (where time >= ${new Date(FROM_MS).toISOString()}::timestamptz and time <= ${new Date(TO_MS).toISOString()}::timestamptz)::int as inside from earthquake_events`,
      )
    ).rows;
    const [audit] = (
      await db.execute<{
        calls: number;
        billed: number;
        unknown: number;
        probes: number;
        first: string | null;
        last: string | null;
        mean_ms: number | null;
      }>(
        sql`select count(*)::int as calls, count(*) filter (where billed)::int as billed, count(*) filter (where billed is null)::int as unknown,
                 count(*) filter (where call_purpose like '%probe%')::int as probes,
                 (extract(epoch from min(started_at)) * 1000)::bigint::text as first, (extract(epoch from max(finished_at)) * 1000)::bigint::text as last,
                 avg(duration_ms)::float as mean_ms
          from gateway_executions`,
      )
    ).rows;
    const attempts = (
      await db.execute<{ partition_key: string; s: string; f: string | null }>(
        sql`select partition_key, (extract(epoch from started_at) * 1000)::bigint::text as s, (extract(epoch from finished_at) * 1000)::bigint::text as f
          from gateway_executions where partition_key is not null`,
      )
    ).rows;
    const chain = longestWindow(
      attempts.map((a) => ({
        partition: a.partition_key,
        startMs: Number(a.s),
        endMs: a.f === null ? Number(a.s) : Number(a.f),
      })),
    );
    const pgTables = (
      await db.execute<{ table: string; inserted: number; updated: number }>(
        sql`select relname as table, n_tup_ins::int as inserted, n_tup_upd::int as updated from pg_stat_user_tables where n_tup_ins + n_tup_upd > 0 order by relname`,
      )
    ).rows;
    const [commits] = (
      await db.execute<{ n: number }>(
        sql`select xact_commit::int as n from pg_stat_database where datname = current_database()`,
      )
    ).rows;
    const profileFile = o.profileDir ? join(o.profileDir, `${label}-${runId}.cpuprofile`) : null;
    return {
      label,
      concurrency: o.concurrency ?? 4,
      latencyMs: o.latencyMs,
      exitCode,
      wallS,
      finishedS,
      plannedS,
      firstCallS: audit?.first ? (Number(audit.first) - t0) / 1000 : null,
      lastAnswerS: audit?.last ? (Number(audit.last) - t0) / 1000 : null,
      events: counts?.events ?? 0,
      lost: catalog.events - (counts?.inside ?? 0),
      windows: windows.length,
      windowsDone: windows.filter((w) => w.state === PARTITION_STATE.done).length,
      calls: audit?.calls ?? 0,
      billed: audit?.billed ?? 0,
      billedUnknown: audit?.unknown ?? 0,
      probes: audit?.probes ?? 0,
      ideal,
      meanCallMs: audit?.mean_ms ?? 0,
      chain,
      peakRssMiB: peak,
      cpu: { cli: cliCpu, emulator: emulatorCpu, postgres: backends.seconds(), redis: after.cpuS - before.cpuS },
      redis: {
        beforeBytes: before.usedMemory,
        afterBytes: after.usedMemory,
        keysAfter: after.keys,
        bytesUnderPrefix: after.bytes,
        completedJobBytes: after.completedJobBytes,
      },
      pg: { commits: commits?.n ?? 0, tables: pgTables },
      stderrLines,
      profileFile,
    };
  } finally {
    if (child) await stopProcess(child);
    await dropPrefix(redis, prefix).catch((e: unknown) => say(`could not clear ${prefix}: ${String(e)}`));
    redis.disconnect();
    await handle.close();
    await dropDatabase(url);
  }
}

interface WindowCalls {
  partition: string;
  calls: number;
  /** First call's start to last answer. */
  spanS: number;
  /** The longest run of calls each sent after the one before had its answer. */
  sequential: number;
  /** Most calls of the window in flight at once. */
  maxInFlight: number;
  /** Mean time from the window's last answer before a call to that call: what happens between calls. */
  meanGapMs: number;
}

/** Per window (partition), how its calls were laid out in time; the window that took longest. */
function longestWindow(calls: Array<{ partition: string; startMs: number; endMs: number }>): WindowCalls | null {
  const byWindow = new Map<string, Array<{ startMs: number; endMs: number }>>();
  for (const c of calls) byWindow.set(c.partition, [...(byWindow.get(c.partition) ?? []), c]);
  let worst: WindowCalls | null = null;
  for (const [partition, list] of byWindow) {
    list.sort((a, b) => a.endMs - b.endMs);
    const depth: number[] = [];
    list.forEach((c, i) => {
      let best = 0;
      for (let j = 0; j < i; j++) if (list[j]!.endMs <= c.startMs) best = Math.max(best, depth[j]!);
      depth[i] = best + 1;
    });
    const edges = list
      .flatMap(
        (c) =>
          [
            [c.startMs, 1],
            [c.endMs, -1],
          ] as const,
      )
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let inFlight = 0;
    let maxInFlight = 0;
    for (const [, d] of edges) maxInFlight = Math.max(maxInFlight, (inFlight += d));
    const spanS = (Math.max(...list.map((c) => c.endMs)) - Math.min(...list.map((c) => c.startMs))) / 1000;
    const gaps = list.flatMap((c) => {
      const before = list.filter((o) => o.endMs <= c.startMs).map((o) => o.endMs);
      return before.length > 0 ? [c.startMs - Math.max(...before)] : [];
    });
    const meanGapMs = gaps.length > 0 ? gaps.reduce((a, b) => a + b, 0) / gaps.length : 0;
    const w = { partition, calls: list.length, spanS, sequential: Math.max(...depth), maxInFlight, meanGapMs };
    if (!worst || w.spanS > worst.spanS) worst = w;
  }
  return worst;
}

function keptCount(keep: JobsOptions['removeOnComplete']): number | null {
  if (typeof keep === 'number') return keep;
  if (typeof keep === 'object' && typeof keep.count === 'number') return keep.count;
  return null;
}

interface PlanResult {
  windows: number;
  totalS: number;
  again: { seconds: number; alreadyQueued: number };
  parts: { streamS: number; planS: number; recordPlannedS: number; enqueueS: number };
  /** `gateway-ingest backfill earthquakes` (no --wait) of the same span on a fresh stream and prefix, spawn to exit. */
  cli: { seconds: number; exitCode: number | null };
  /** Completed jobs a queue keeps (removeOnComplete count), as the product opens its queues. */
  keepCompleted: number | null;
}

/** Spawn to exit of a CLI command, with its stdout. */
async function timedCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ seconds: number; exitCode: number | null; stdout: string }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [...childNodeOptions, CLI, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.resume();
  try {
    const exitCode = await waitExit(child);
    return { seconds: (performance.now() - t0) / 1000, exitCode, stdout };
  } finally {
    await stopProcess(child);
  }
}

/** Plan and enqueue of `years` of windows, timed in this process around the product function. */
async function planAndEnqueue(years: number): Promise<PlanResult> {
  const url = await freshDatabase('plan');
  const prefix = `bench-${runId}-plan`;
  const handle = openDb(url);
  const connection = openRedis(redisUrl, 'producer');
  const queue = openQueue('earthquake', { connection, prefix });
  const toMs = Date.now();
  const fromMs = toMs - Math.round(years * 365.25 * DAY_MS);
  try {
    // Connections and BullMQ's scripts are set up before the clock starts, as in a running process.
    await handle.pool.query('select 1');
    await queue.waitUntilReady();
    await queue.getJobCounts();
    const filters = { minMagnitude: null, circle: null };
    let t = performance.now();
    const summary = await enqueueEarthquakeBackfill(handle.db, queue, { filters, fromMs, toMs, refresh: false });
    const totalS = (performance.now() - t) / 1000;
    t = performance.now();
    const again = await enqueueEarthquakeBackfill(handle.db, queue, { filters, fromMs, toMs, refresh: false });
    const againS = (performance.now() - t) / 1000;
    // The same steps one by one, on another stream and queue prefix.
    const otherFilters = { minMagnitude: 2.5, circle: null };
    const other = openQueue('earthquake', { connection, prefix: `${prefix}-parts` });
    try {
      await other.waitUntilReady();
      t = performance.now();
      const stream = earthquakeStream(otherFilters);
      await upsertStream(handle.db, stream, null);
      const streamS = (performance.now() - t) / 1000;
      t = performance.now();
      const work = earthquakeWork(stream, otherFilters, planWindows({ fromMs, toMs, coveredMs: [] }));
      const planS = (performance.now() - t) / 1000;
      t = performance.now();
      await recordPlanned(
        handle.db,
        work.map((w) => w.partition),
        false,
      );
      const recordPlannedS = (performance.now() - t) / 1000;
      t = performance.now();
      await enqueueJobs(
        other,
        work.map((w) => w.job),
      );
      const enqueueS = (performance.now() - t) / 1000;
      const cliRun = await timedCli(
        [
          'backfill',
          'earthquakes',
          '--from',
          new Date(fromMs).toISOString(),
          '--to',
          new Date(toMs).toISOString(),
          '--min-magnitude',
          '3',
        ],
        { ...process.env, DATABASE_URL: url, REDIS_URL: redisUrl, QUEUE_PREFIX: `${prefix}-cli` },
      );
      if (cliRun.exitCode !== 0) say(`plan: the CLI backfill exited ${cliRun.exitCode}: ${cliRun.stdout}`);
      return {
        windows: summary.planned,
        totalS,
        again: { seconds: againS, alreadyQueued: again.alreadyQueued },
        parts: { streamS, planS, recordPlannedS, enqueueS },
        cli: { seconds: cliRun.seconds, exitCode: cliRun.exitCode },
        keepCompleted: keptCount(queue.defaultJobOptions.removeOnComplete),
      };
    } finally {
      await other.close();
      await dropPrefix(connection, `${prefix}-parts`);
      await dropPrefix(connection, `${prefix}-cli`);
    }
  } finally {
    await closeQueue(queue);
    await dropPrefix(connection, prefix);
    connection.disconnect();
    await handle.close();
    await dropDatabase(url);
  }
}

// ---------------------------------------------------------------------------------------------
// CPU profile summary (node --cpu-prof): self time by module and function, and time under each
// product function (the nearest product frame on the stack gets the library time beneath it).

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface ProfileSummary {
  totalS: number;
  idleS: number;
  /** Self time, natives and node internals charged to the nearest package or product folder above them. */
  byOwner: Array<[string, number]>;
  byFunction: Array<[string, number]>;
  /** Each sample charged to the first activity below whose code is anywhere on its stack. */
  byActivity: Array<[string, number]>;
}

/** Activities, first match wins: a library called from product code is charged to the library. */
const ACTIVITIES: Array<[string, RegExp]> = [
  ['garbage collector', /\(garbage collector\)/],
  [
    'drizzle insert: build + send (mostly the 200-row event upsert; also the audit row begun)',
    /drizzle-orm\/pg-core\/query-builders\/insert\.js/,
  ],
  [
    'drizzle update: build + send (audit completion, rows written, partition progress and frontier)',
    /drizzle-orm\/pg-core\/query-builders\/update\.js/,
  ],
  ['drizzle select and other', /drizzle-orm\//],
  ['pg driver: results, protocol, pool', /node_modules\/(pg|pg-protocol|pg-pool|pg-types)\//],
  ['HTTP client (undici), answer body and JSON.parse', /node_modules\/undici\//],
  ['zod validation (answers, frontier, payloads)', /node_modules\/zod\//],
  ['BullMQ / ioredis', /node_modules\/(bullmq|ioredis)\//],
  ['logging (pino)', /node_modules\/(pino|sonic-boom|thread-stream)/],
  ['planning: frontier, truncation', /\/(dist|src)\/planning\//],
  ['gateway: requests, answer reading', /\/(dist|src)\/gateway\//],
  ['db: row mapping', /\/(dist|src)\/db\//],
  ['worker', /\/(dist|src)\/worker\//],
  ['module loading (start-up)', /node:internal\/modules|compileSourceTextModule/],
];

function moduleOf(url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : `(native) ${fn || '(anonymous)'}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return nm[1]!;
  const own = /\/(dist|src)\/(.+)$/.exec(url);
  if (own) return own[2]!.replace(/\.js$/, '.ts');
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url;
}

const isProduct = (url: string): boolean => /\/(dist|src)\//.test(url) && !url.includes('node_modules');

function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const ownerMap = new Map<string, number>();
  const fun = new Map<string, number>();
  const activity = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const m = moduleOf(url, functionName);
    add(fun, `${functionName || '(anonymous)'} ${m}${url ? `:${lineNumber + 1}` : ''}`, us);
    let owner: string | null = null;
    const stack: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      stack.push(`${f.url} ${f.functionName}`);
      if (owner !== null) continue;
      if (isProduct(f.url)) owner = moduleOf(f.url, f.functionName).replace(/\/[^/]+$/, '/');
      else if (f.url.includes('node_modules')) owner = moduleOf(f.url, f.functionName);
    }
    add(ownerMap, owner ?? m, us);
    const [what] = ACTIVITIES.find(([, re]) => stack.some((frame) => re.test(frame))) ?? [`other: ${owner ?? m}`];
    add(
      activity,
      what.startsWith('other: node:') || what.startsWith('other: (native)') ? 'other: node internals' : what,
      us,
    );
  }
  const sorted = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => [k, us / 1e6] as [string, number]);
  return {
    totalS: total / 1e6,
    idleS: idle / 1e6,
    byOwner: sorted(ownerMap),
    byFunction: sorted(fun),
    byActivity: sorted(activity),
  };
}

// ---------------------------------------------------------------------------------------------
// Output

type Row = [measure: string, value: string, target: string, met: string, cost: string];

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
const costOf = (r: E2eResult) => `${r.billed} / ${r.ideal} = ${f2(r.billed / r.ideal)}`;

function rows(
  direct: DirectResult,
  raw: DirectResult | null,
  zero: E2eResult,
  lat: E2eResult | null,
  worker: E2eResult | null,
  plan: PlanResult,
  keepCompleted: number | null,
): Row[] {
  const out: Row[] = [];
  const cpuOf = (d: DirectResult) => `CPU: node ${f1(d.cpu.node)} s, postgres ${f1(d.cpu.postgres)} s`;
  out.push([
    'direct upsert (upsertEvents), 200-row batches, 1 connection',
    `${int(direct.events)} events in ${f2(direct.seconds)} s = ${int(direct.rate)} events/s; ${cpuOf(direct)}`,
    '(baseline)',
    '',
    '0 calls',
  ]);
  if (raw)
    out.push([
      '  reference: same upsert as one unnest statement (not product code)',
      `${f2(raw.seconds)} s = ${int(raw.rate)} events/s (${f2(raw.rate / direct.rate)} x direct); ${cpuOf(raw)}`,
      '',
      '',
      '',
    ]);
  const zeroRate = zero.events / zero.wallS;
  const ratio = zeroRate / direct.rate;
  out.push([
    `CLI backfill --wait --inline, 0 ms latency, concurrency ${zero.concurrency}`,
    `${f1(zero.wallS)} s wall (spawn to exit), ${int(zeroRate)} events/s`,
    '>= 0.7 x direct',
    `${yes(ratio >= 0.7)} (${f2(ratio)})`,
    costOf(zero),
  ]);
  out.push([
    '  same, to the `finished:` line',
    zero.finishedS === null
      ? 'n/a'
      : `${f1(zero.finishedS)} s, ${int(zero.events / zero.finishedS)} events/s (${f2(zero.events / zero.finishedS / direct.rate)} x direct)`,
    '',
    '',
    '',
  ]);
  {
    // Both paths are CPU-bound: the direct one alternates node and its backend on one connection,
    // the CLI's is bounded by its one JavaScript thread or by all CPU work over the cores.
    const directEst = direct.cpu.node + direct.cpu.postgres;
    const c = zero.cpu;
    const e2eEst = Math.max(c.cli, (c.cli + c.emulator + c.postgres + c.redis) / availableParallelism());
    out.push([
      '  estimate for an idle machine, from CPU seconds',
      `direct ${f1(directEst)} s (node + backend), CLI ${f1(e2eEst)} s (max of CLI thread, all CPU / ${availableParallelism()}): ${f2(directEst / e2eEst)} x direct`,
      '',
      '',
      '',
    ]);
  }
  out.push([
    '  spawn to plan printed / first call / last answer to exit',
    `${opt(zero.plannedS)} s / ${opt(zero.firstCallS)} s / ${zero.lastAnswerS === null ? 'n/a' : f2(zero.wallS - zero.lastAnswerS)} s`,
    '',
    '',
    '',
  ]);
  out.push([
    `  peak RSS of the CLI process (VmHWM), ${
      childNodeOptions.length === 0 ? 'plain node (no NODE_OPTIONS)' : `node ${childNodeOptions.join(' ')}`
    }`,
    `${f1(zero.peakRssMiB)} MiB on ${int(zero.events)} events`,
    '< 120 MiB',
    yes(zero.peakRssMiB < 120),
    '',
  ]);
  out.push([
    '  CPU of the CLI process per gateway call',
    `${f2((zero.cpu.cli * 1000) / Math.max(1, zero.calls))} ms (${f1(zero.cpu.cli)} s over ${zero.calls} calls, start-up included)`,
    '<= 6 ms',
    yes((zero.cpu.cli * 1000) / Math.max(1, zero.calls) <= 6),
    '',
  ]);
  out.push(['  CPU seconds: CLI / emulator / postgres backends / redis', cpuLine(zero), '', '', '']);
  out.push([
    '  gateway calls (all / billed / billed unknown / probes), mean call',
    `${zero.calls} / ${zero.billed} / ${zero.billedUnknown} / ${zero.probes}, ${f1(zero.meanCallMs)} ms`,
    '',
    '',
    '',
  ]);
  out.push(['  per call: transactions committed, rows inserted+updated by table', pgLine(zero), '', '', '']);
  out.push([
    '  windows done, events lost, exit code',
    `${zero.windowsDone} of ${zero.windows}, ${zero.lost} lost, exit ${zero.exitCode}`,
    'all, 0, 0',
    yes(zero.windowsDone === zero.windows && zero.lost === 0 && zero.exitCode === 0),
    '',
  ]);
  for (const r of lat ? [zero, lat] : [zero]) {
    out.push([
      `  Redis after the ${r.latencyMs} ms run: used_memory before -> after; keys and bytes left under its prefix`,
      `${mib(r.redis.beforeBytes)} -> ${mib(r.redis.afterBytes)}; ${r.redis.keysAfter} keys, ${int(r.redis.bytesUnderPrefix)} B (a retained completed job ${int(r.redis.completedJobBytes)} B${keepCompleted === null ? '' : `; at most ${int(keepCompleted)} kept per queue = ${mib(keepCompleted * r.redis.completedJobBytes)}`})`,
      'bounded by retention',
      '',
      '',
    ]);
  }
  if (lat) {
    const idealS = (lat.calls * lat.latencyMs) / 1000 / lat.concurrency;
    const r = lat.wallS / idealS;
    out.push([
      `CLI backfill, ${lat.latencyMs} ms latency, WORKER_CONCURRENCY=${lat.concurrency}`,
      `${f1(lat.wallS)} s wall vs ideal ${f1(idealS)} s (${lat.calls} calls x ${lat.latencyMs / 1000} s / ${lat.concurrency})`,
      '<= 1.15 x ideal',
      `${yes(r <= 1.15)} (${f2(r)})`,
      costOf(lat),
    ]);
    out.push([
      '  to the `finished:` line; first call; mean call',
      `${opt(lat.finishedS, 1)} s; ${opt(lat.firstCallS)} s; ${f1(lat.meanCallMs)} ms`,
      '',
      '',
      '',
    ]);
    if (lat.chain) {
      out.push([
        '  slowest window: calls, sequential chain, span',
        `${lat.chain.calls} calls, at most ${lat.chain.maxInFlight} in flight; longest chain ${lat.chain.sequential} calls x ${lat.latencyMs / 1000} s = ${f1((lat.chain.sequential * lat.latencyMs) / 1000)} s; first call to last answer ${f1(lat.chain.spanS)} s; answer to next call ${int(lat.chain.meanGapMs)} ms on average`,
        '',
        '',
        '',
      ]);
    }
    out.push(['  CPU seconds: CLI / emulator / postgres backends / redis', cpuLine(lat), '', '', '']);
    out.push([
      '  windows done, events lost, exit code; peak RSS',
      `${lat.windowsDone} of ${lat.windows}, ${lat.lost} lost, exit ${lat.exitCode}; ${f1(lat.peakRssMiB)} MiB`,
      'all, 0, 0',
      yes(lat.windowsDone === lat.windows && lat.lost === 0 && lat.exitCode === 0),
      '',
    ]);
  }
  if (worker) {
    out.push([
      `one \`worker\` process through the same backfill (enqueued by \`backfill\`), concurrency ${worker.concurrency}`,
      `peak RSS ${f1(worker.peakRssMiB)} MiB; ${f1(worker.wallS)} s spawn to the last window done; CPU ${f2((worker.cpu.cli * 1000) / Math.max(1, worker.calls))} ms per call`,
      '< 100 MiB',
      yes(worker.peakRssMiB < 100),
      costOf(worker),
    ]);
    out.push([
      '  windows done, events lost',
      `${worker.windowsDone} of ${worker.windows}, ${worker.lost} lost`,
      'all, 0',
      yes(worker.windowsDone === worker.windows && worker.lost === 0),
      '',
    ]);
  }
  out.push([
    `plan + enqueue of ${planYears} years (in process, connections warm)`,
    `${plan.windows} windows in ${f2(plan.totalS)} s`,
    '< 1 s',
    yes(plan.totalS < 1),
    '0 calls',
  ]);
  out.push([
    '  parts: stream / plan (pure) / recordPlanned / enqueueJobs',
    `${f2(plan.parts.streamS)} / ${f2(plan.parts.planS)} / ${f2(plan.parts.recordPlannedS)} / ${f2(plan.parts.enqueueS)} s`,
    '',
    '',
    '',
  ]);
  out.push([
    '  the same again, all jobs still queued',
    `${f2(plan.again.seconds)} s (${plan.again.alreadyQueued} already queued)`,
    '',
    '',
    '',
  ]);
  out.push([
    '  whole CLI process (`backfill earthquakes`, no --wait), spawn to exit',
    `${f2(plan.cli.seconds)} s, exit ${plan.cli.exitCode}`,
    '',
    '',
    '',
  ]);
  return out;
}

function opt(n: number | null, digits = 2): string {
  return n === null ? 'n/a' : n.toFixed(digits);
}

function cpuLine(r: E2eResult): string {
  const sum = r.cpu.cli + r.cpu.emulator + r.cpu.postgres + r.cpu.redis;
  return `${f1(r.cpu.cli)} / ${f1(r.cpu.emulator)} / ${f1(r.cpu.postgres)} / ${f1(r.cpu.redis)} s (sum ${f1(sum)} of ${f1(r.wallS * availableParallelism())} CPU-s in the wall time; CLI busy ${int((100 * r.cpu.cli) / r.wallS)}% of one core)`;
}

function pgLine(r: E2eResult): string {
  const per = (n: number) => (r.calls > 0 ? (n / r.calls).toFixed(1) : 'n/a');
  const tables = r.pg.tables
    .filter((t) => t.table !== 'earthquake_events' && t.inserted + t.updated >= r.calls / 10)
    .map((t) => `${t.table} ${per(t.inserted + t.updated)}`);
  return `${per(r.pg.commits)} commits; ${tables.join(', ')}`;
}

function render(table: Row[], markdown: boolean): string {
  const header: Row = ['measurement', 'value', 'target', 'met', 'billed / ideal calls'];
  if (markdown) {
    const esc = (s: string) => s.replace(/\|/g, '\\|');
    // Markdown trims a cell's leading spaces: sub-rows are marked instead.
    const cell = (c: string) => esc(c.startsWith('  ') ? `↳ ${c.trimStart()}` : c);
    return [header, ['---', '---', '---', '---', '---'] as Row, ...table]
      .map((r) => `| ${r.map(cell).join(' | ')} |`)
      .join('\n');
  }
  const widths = header.map((_, i) => Math.max(...[header, ...table].map((r) => r[i]!.length)));
  return [header, ...table]
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function renderProfile(p: ProfileSummary, markdown: boolean): string {
  const busy = p.totalS - p.idleS;
  const section = (title: string, list: Array<[string, number]>) => {
    const share = (sec: number) => `${((100 * sec) / busy).toFixed(1)}%`;
    const lines = list.map(([k, sec]) =>
      markdown
        ? `| ${k.replace(/\|/g, '\\|')} | ${sec.toFixed(2)} | ${share(sec)} |`
        : `  ${share(sec).padStart(6)}  ${sec.toFixed(2).padStart(6)} s  ${k}`,
    );
    return markdown
      ? [`\n**${title}**\n`, '| where | CPU s | share of busy |', '|---|---|---|', ...lines].join('\n')
      : [`${title}:`, ...lines].join('\n');
  };
  return [
    `CPU profile of the CLI process: ${p.totalS.toFixed(1)} s sampled, ${p.idleS.toFixed(1)} s idle, ${busy.toFixed(1)} s busy (shares below are of busy time)`,
    section(
      'by activity (a sample goes to the first activity listed in the script whose code is on its stack)',
      p.byActivity,
    ),
    section(
      'by owner (natives and node internals charged to the nearest package or product folder calling them)',
      p.byOwner,
    ),
    section('self time by function', p.byFunction.slice(0, 10)),
  ].join('\n');
}

/** Which code was measured: the commit and how many files differ from it (the tree may be mid-change). */
function codeState(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: packageRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const changed = git('status', '--porcelain').split('\n').filter(Boolean).length;
    return `git ${git('rev-parse', '--short', 'HEAD')}${changed > 0 ? ` + ${changed} uncommitted files` : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

function machine(load = loadavg()): string {
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  return `${availableParallelism()} CPUs (nproc; ${cpu}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}, load average at start ${load.map((l) => l.toFixed(2)).join(' ')}`;
}

// ---------------------------------------------------------------------------------------------

async function bench(): Promise<void> {
  const started = Date.now();
  const startLoad = loadavg();
  const code = codeState();
  say(machine());
  say(`loading the real month tiled over ${months} months ...`);
  const catalog = await loadCatalog();
  say(`${catalog.events} events from ${new Date(FROM_MS).toISOString()} to ${new Date(TO_MS).toISOString()}`);
  const emulators: EmulatorProcess[] = [];
  try {
    const zeroEmulator = await startEmulatorProcess(0);
    emulators.push(zeroEmulator);
    say(`emulator (pid ${zeroEmulator.pid}) at ${zeroEmulator.url}; direct upsert ...`);
    const direct = await directUpsert(catalog);
    say(`direct: ${int(direct.rate)} events/s; reference unnest upsert ...`);
    const raw = await rawUpsert(catalog).catch((e: unknown) => {
      say(`reference upsert failed (schema changed?): ${e instanceof Error ? e.message : String(e)}`);
      return null;
    });
    say(`reference: ${raw ? int(raw.rate) : 'n/a'} events/s; CLI backfill at 0 ms ...`);
    const zero = await endToEnd('zero', catalog, zeroEmulator, { concurrency: null, latencyMs: 0 });
    say(`zero latency: ${f1(zero.wallS)} s`);
    let lat: E2eResult | null = null;
    if (!opts['skip-latency']) {
      const slow = await startEmulatorProcess(latencyMs);
      emulators.push(slow);
      say(`CLI backfill at ${latencyMs} ms, concurrency ${latencyConcurrency} ...`);
      lat = await endToEnd('latency', catalog, slow, { concurrency: latencyConcurrency, latencyMs });
      say(`latency: ${f1(lat.wallS)} s`);
      await stopProcess(slow.child);
    }
    say('CLI backfill enqueued, then one worker process at 0 ms ...');
    const worker = await endToEnd('worker', catalog, zeroEmulator, { concurrency: null, latencyMs: 0, mode: 'worker' });
    say(`worker: ${f1(worker.wallS)} s, peak RSS ${f1(worker.peakRssMiB)} MiB`);
    say(`plan + enqueue of ${planYears} years ...`);
    const plan = await planAndEnqueue(planYears);
    let profile: ProfileSummary | null = null;
    if (opts.profile) {
      mkdirSync(opts.profile, { recursive: true });
      say(`profiled CLI backfill at 0 ms (node --cpu-prof into ${opts.profile}) ...`);
      const profiled = await endToEnd('profile', catalog, zeroEmulator, {
        concurrency: null,
        latencyMs: 0,
        profileDir: opts.profile,
      });
      say(
        `profiled run: ${f1(profiled.wallS)} s; CPU CLI ${f1(profiled.cpu.cli)} s, emulator ${f1(profiled.cpu.emulator)} s, postgres ${f1(profiled.cpu.postgres)} s`,
      );
      if (profiled.profileFile) profile = summarizeProfile(profiled.profileFile);
    }
    const md = Boolean(opts.markdown);
    const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trimEnd();
    const lines = [
      md ? `Command: \`${command}\`` : `command: ${command}`,
      md ? `Machine: ${machine(startLoad)}` : `machine: ${machine(startLoad)}`,
      md ? `Code: ${code}` : `code: ${code}`,
      `Data: the real month (${MONTH_FILE.replace(packageRoot, '')}) tiled over ${months} months, ${int(catalog.events)} events; emulator a separate process (order newest, seed 1)`,
      '',
      render(rows(direct, raw, zero, lat, worker, plan, plan.keepCompleted), md),
    ];
    if (profile) lines.push('', renderProfile(profile, md));
    lines.push(
      '',
      `(bench took ${f1((Date.now() - started) / 1000)} s; load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const e of emulators) await stopProcess(e.child);
  }
}

bench().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
