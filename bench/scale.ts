/**
 * Decades on one database: the bundled month tiled by the emulator over `--years` years ending
 * 2026-01-01, backfilled as a user does (`backfill earthquakes ... --yes --wait --inline`), then every
 * read an operator and a BI user make, timed after VACUUM ANALYZE, in one table with the targets. A script,
 * not a test: it asserts nothing.
 *   npm run bench:scale -- [--years 50] [--concurrency 8] [--runs 5] [--keep] [--reuse DATABASE] [--backfill-only]
 *     [--node PATH] [--node-options "..."] [--malloc image|default]
 * `--keep` leaves the database for another run; `--reuse` times the reads of a kept one again;
 * `--backfill-only` measures the backfill alone (to compare with a version without the reads).
 * `--node` runs the CLI on another Node (the image's is 22). Every CLI process runs with the image's
 * runtime settings (the Dockerfile's NODE_OPTIONS and MALLOC_* variables) unless `--node-options` and
 * `--malloc default` say otherwise (`--node-options= --malloc default` for Node's and glibc's defaults).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { dataFolder } from '@gateway-ingest/emulator';
import { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '../src/config/env.js';
import { openDb, type Db } from '../src/db/connection.js';
import { dropDatabase, runMigrations } from '../src/db/migrate.js';
import { streamFreshness } from '../src/db/queries/freshness.js';
import { streamStatus } from '../src/db/queries/status.js';
import { packageRoot } from '../src/paths.js';

/** As the Dockerfile's runtime stage sets them. */
const IMAGE_NODE_OPTIONS = '--max-semi-space-size=4 --max-old-space-size=128';
const IMAGE_MALLOC = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' };

const { values: opts } = parseArgs({
  options: {
    years: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '8' },
    runs: { type: 'string', default: '5' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'string' },
    'backfill-only': { type: 'boolean', default: false },
    node: { type: 'string', default: process.execPath },
    'node-options': { type: 'string', default: IMAGE_NODE_OPTIONS },
    malloc: { type: 'string', default: 'image' },
  },
  strict: true,
});
const years = Number(opts.years);
const runs = Number(opts.runs);
const TO = '2026-01-01T00:00:00Z';
const FROM = `${2026 - years}-01-01T00:00:00Z`;
const CLI = join(packageRoot, 'bin', 'gateway-ingest.js');
const MONTH_FILE = join(dataFolder, 'usgs', 'all_month_2025-05-06_2025-06-05.csv');
const serverUrl = process.env['DATABASE_URL'] || DEFAULT_DATABASE_URL;
const redisUrl = process.env['REDIS_URL'] || DEFAULT_REDIS_URL;
const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const key = randomBytes(12).toString('hex');
const NODE = opts.node;
const cliEnv = (env: Record<string, string>): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = { ...process.env, ...env, NODE_OPTIONS: opts['node-options'] };
  for (const [name, value] of Object.entries(IMAGE_MALLOC)) {
    if (opts.malloc === 'image') out[name] = value;
    else delete out[name];
  }
  return out;
};
const say = (line: string): void => void process.stderr.write(`[bench:scale] ${line}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function databaseUrl(name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Peak resident memory of a live process, MiB (VmHWM: the kernel's high-water mark). */
function peakRssMiB(pid: number): number {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb ?? 0) / 1024;
  } catch {
    return 0;
  }
}

interface Exit {
  code: number | null;
  wallMs: number;
  peakMiB: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its exit, watching its peak memory. */
function cli(args: string[], env: Record<string, string>): Promise<Exit> {
  const t0 = performance.now();
  const child = spawn(NODE, [CLI, ...args], { env: cliEnv(env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  let peakMiB = 0;
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const watch = setInterval(() => (peakMiB = Math.max(peakMiB, peakRssMiB(child.pid!))), 200);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearInterval(watch);
      resolve({ code, wallMs: performance.now() - t0, peakMiB, stdout, stderr });
    }),
  );
}

/** Starts a long-running CLI command and waits for a line of its output matching `ready`. */
async function daemon(args: string[], env: Record<string, string>, ready: RegExp): Promise<[ChildProcess, string]> {
  const child = spawn(NODE, [CLI, ...args], { env: cliEnv(env), stdio: 'pipe' });
  let out = '';
  const found = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start within 60 s: ${out}`)), 60_000);
    const read = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${out}`)));
  });
  return [child, found];
}

async function timed(n: number, read: () => Promise<unknown>): Promise<number> {
  await read(); // warm: the first read of a cold cache is not what a scrape every 15 s sees
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await read();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/**
 * A query's time in libpq, the client library most BI drivers sit on or match: psql's \timing (from
 * sending it to the last row received, before printing), the median of `runs` after one warm-up; NaN
 * without psql.
 */
function libpqMs(url: string, query: string): number {
  const ms: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const r = spawnSync('psql', ['-X', '-q', url, '-c', '\\timing on', '-c', query, '-o', '/dev/null'], {
      encoding: 'utf8',
    });
    const t = /Time: ([\d.]+) ms/.exec(r.stdout ?? '')?.[1];
    if (t === undefined) return Number.NaN;
    if (i > 0) ms.push(Number(t));
  }
  return median(ms);
}

async function get(url: string): Promise<void> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  await res.text();
}

interface Backfilled {
  wallS: number;
  peakMiB: number;
  code: number | null;
}

async function backfill(env: Record<string, string>): Promise<Backfilled> {
  say(`backfill ${FROM}..${TO} at concurrency ${env['WORKER_CONCURRENCY']}`);
  const r = await cli(['backfill', 'earthquakes', '--from', FROM, '--to', TO, '--yes', '--wait', '--inline'], env);
  if (r.code !== 0) say(`backfill exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return { wallS: r.wallMs / 1000, peakMiB: r.peakMiB, code: r.code };
}

interface Rates {
  events: number;
  auditRows: number;
  windows: number;
  /** Events per second while each tenth of the years was written (span of its first_seen_at). */
  tenths: number[];
}

async function rates(db: Db): Promise<Rates> {
  const lo = Date.parse(FROM) / 1000;
  const hi = Date.parse(TO) / 1000;
  const tenths = await db.execute<{ tenth: number; n: number; span_s: number }>(sql`
    select width_bucket(extract(epoch from time), ${lo}::float8, ${hi}::float8, 10) as tenth, count(*)::int as n,
      extract(epoch from max(first_seen_at) - min(first_seen_at))::float8 as span_s
    from earthquake_events group by 1 order by 1`);
  const counts = await db.execute<{ events: number; audit: number; windows: number }>(sql`
    select (select count(*) from earthquake_events)::int as events, (select count(*) from gateway_executions)::int as audit,
      (select count(*) from ingest_partitions)::int as windows`);
  const c = counts.rows[0]!;
  return {
    events: c.events,
    auditRows: c.audit,
    windows: c.windows,
    tenths: tenths.rows.filter((t) => t.tenth >= 1 && t.tenth <= 10).map((t) => t.n / Math.max(1, t.span_s)),
  };
}

function printBackfill(r: Rates, filled: Backfilled | null): void {
  const first = r.tenths[0] ?? 0;
  const last = r.tenths.at(-1) ?? 0;
  console.log(
    `\n### ${years} years (${FROM.slice(0, 10)}..${TO.slice(0, 10)}): ${r.events.toLocaleString('en')} events, ` +
      `${r.windows} windows, ${r.auditRows.toLocaleString('en')} audit rows\n`,
  );
  const version = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const malloc =
    opts.malloc === 'image' ? Object.entries(IMAGE_MALLOC).map(([k, v]) => `${k}=${v}`) : ['glibc defaults'];
  console.log(
    `CLI processes: Node ${version}, NODE_OPTIONS=${JSON.stringify(opts['node-options'])}, ${malloc.join(', ')}\n`,
  );
  console.log(`events/s per tenth of the years, oldest first: ${r.tenths.map((t) => t.toFixed(0)).join(', ')}\n`);
  console.log('| what | figure | target |\n|---|---|---|');
  if (filled) {
    const rate = (r.events / filled.wallS).toFixed(0);
    console.log(
      `| the backfill, concurrency ${opts.concurrency} | ${filled.wallS.toFixed(0)} s, exit ${filled.code}, ${rate} events/s | - |`,
    );
    console.log(`| peak RSS of the backfill process | ${filled.peakMiB.toFixed(0)} MiB | 150 MiB |`);
  }
  const ratio = (last / Math.max(1, first)).toFixed(2);
  console.log(
    `| events/s, last tenth of the years against the first | ${last.toFixed(0)} / ${first.toFixed(0)} = ${ratio} | 0.8 to 1.2 |`,
  );
}

/**
 * How fast this machine is right now (its speed moves by a third from minute to minute, and the CLI
 * figures with it): an empty Node process from spawn to exit, and a fixed CPU task in this process.
 */
function machineReference(): string {
  const spawnMs: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const t0 = performance.now();
    spawnSync(NODE, ['-e', '0'], { env: cliEnv({}) });
    if (i > 0) spawnMs.push(performance.now() - t0);
  }
  const cpuMs: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const t0 = performance.now();
    let x = 1;
    const xs = Array.from({ length: 200_000 }, () => (x = (x * 48_271) % 2_147_483_647));
    xs.sort((a, b) => a - b);
    if (i > 0) cpuMs.push(performance.now() - t0);
  }
  return (
    `machine reference: \`node -e 0\` ${median(spawnMs).toFixed(0)} ms from spawn to exit, ` +
    `a fixed CPU task (sorting 200,000 numbers) ${median(cpuMs).toFixed(0)} ms`
  );
}

/** Every column as the text PostgreSQL sends. */
const AS_TEXT = { getTypeParser: () => (value: string) => value };

const JOBS_YAML = `earthquakes:\n  - name: all\n    every: 1h\n    enabled: false\n`;

async function main(): Promise<void> {
  const dbName = opts.reuse ?? `gi_scale_${years}y_${runId}`;
  const url = databaseUrl(dbName);
  await runMigrations(url);
  const emptyUrl = databaseUrl(`gi_scale_empty_${runId}`);
  await runMigrations(emptyUrl);
  const [emulator, gatewayUrl] = await daemon(
    ['emulator', '--port', '0', '--catalog', MONTH_FILE, '--tile-from', FROM, '--tile-to', TO, '--seed', '1'],
    { MARKET_KEY: key, LOG_LEVEL: 'warn' },
    /listening on (\S+)/,
  );
  const env = {
    DATABASE_URL: url,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `gi-scale-${runId}`,
    GATEWAY_BASE_URL: gatewayUrl,
    GATEWAY_ALLOW_INSECURE_HTTP: '1',
    MARKET_KEY: key,
    WORKER_CONCURRENCY: opts.concurrency,
    LOG_LEVEL: 'warn',
  };
  const db = openDb(url, { max: 2 });
  let service: ChildProcess | undefined;
  let text: pg.Client | undefined;
  try {
    const filled = opts.reuse ? null : await backfill(env);
    // What production's autovacuum would have done after the load (autovacuum is off on the bench machines).
    say('vacuum analyze');
    await db.db.execute(sql`vacuum analyze`);
    const r = await rates(db.db);
    printBackfill(r, filled);
    if (opts['backfill-only']) return;
    const jobs = join(mkdtempSync(join(tmpdir(), 'gi-scale-')), 'jobs.yaml');
    writeFileSync(jobs, JOBS_YAML);
    const [svc, port] = await daemon(
      ['start', '--config', jobs],
      { ...env, HTTP_PORT: '0', LOG_LEVEL: 'info' },
      /"port":(\d+)[^\n]*http listening/,
    );
    service = svc;
    const base = `http://127.0.0.1:${port}`;
    const range = ['--from', FROM, '--to', TO];
    const cliMs = (args: string[], e = env) => timed(runs, () => cli(args, e));
    // What a BI tool's driver waits for: every row of the answer, before it converts values its own way.
    text = new pg.Client({ connectionString: url });
    await text.connect();
    const client = text;
    const asText = (query: string) => client.query({ text: query, rowMode: 'array', types: AS_TEXT });
    say('timing reads');
    const reference = machineReference();
    const rows: Array<[string, number, string]> = [
      ['`status` (CLI, spawn to exit)', await cliMs(['status']), '300 ms'],
      ['`status --json` (CLI, spawn to exit)', await cliMs(['status', '--json']), '300 ms'],
      [
        '`status` on an empty database (the CLI start-up alone)',
        await cliMs(['status'], { ...env, DATABASE_URL: emptyUrl }),
        '-',
      ],
      [
        'status reads (streamStatus + streamFreshness, in process)',
        await timed(runs, () => Promise.all([streamStatus(db.db), streamFreshness(db.db)])),
        '300 ms',
      ],
      ['`plan earthquakes ... --refresh` (CLI)', await cliMs(['plan', 'earthquakes', ...range, '--refresh']), '1 s'],
      [
        '`backfill earthquakes ... --dry-run` (CLI)',
        await cliMs(['backfill', 'earthquakes', ...range, '--dry-run']),
        '1 s',
      ],
      ['status page `/`', await timed(runs, () => get(`${base}/`)), '300 ms'],
      ['`/metrics`', await timed(runs, () => get(`${base}/metrics`)), '50 ms'],
    ];
    for (const view of ['earthquakes_daily', 'earthquakes_monthly', 'gateway_cost_daily', 'gateway_cost_monthly']) {
      rows.push(
        [
          `BI: \`select * from ${view}\`, every row received by libpq (psql)`,
          libpqMs(url, `select * from ${view}`),
          '100 ms',
        ],
        [
          `BI: the same, every row received by node-postgres`,
          await timed(runs, () => asText(`select * from ${view}`)),
          '-',
        ],
        [
          `BI: the same, parsed into JS values by node-postgres`,
          await timed(runs, () => db.db.execute(sql.raw(`select * from ${view}`))),
          '-',
        ],
      );
    }
    rows.push([
      'BI: `earthquakes` of magnitude 6 and above (strong-events index)',
      await timed(runs, () => db.db.execute(sql`select * from earthquakes where magnitude >= 6 order by time`)),
      '-',
    ]);
    rows.push([
      'BI: `earthquakes` of M4.5+ in a latitude and longitude box (strong-events area index)',
      await timed(runs, () =>
        db.db.execute(sql`select * from earthquakes where magnitude >= 4.5
          and latitude between 30 and 45 and longitude between -130 and -110`),
      ),
      '-',
    ]);
    rows.push([
      'BI: per day from the `earthquakes` view (no roll-up, for comparison)',
      await timed(runs, () =>
        db.db.execute(sql`select date_trunc('day', time) as day, count(*) as events, max(magnitude) as max_magnitude
          from earthquakes group by 1 order by 1`),
      ),
      '-',
    ]);
    for (const [what, ms, target] of rows) console.log(`| ${what} | ${ms.toFixed(ms < 10 ? 1 : 0)} ms | ${target} |`);
    console.log(`\n${reference}`);
  } finally {
    service?.kill('SIGTERM');
    emulator.kill('SIGTERM');
    await text?.end();
    await db.close();
    await dropDatabase(emptyUrl);
    if (!opts.keep && !opts.reuse) await dropDatabase(url);
    else say(`kept ${dbName}: npm run bench:scale -- --years ${years} --reuse ${dbName}`);
  }
}

await main();
