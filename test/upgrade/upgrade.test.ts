/**
 * Upgrade from the previous release: its CLI (cloned at the commit CHANGELOG.md names, installed and
 * built) plans a backfill and works on it, then the current code takes over the same database and
 * queues. Nothing may be lost, doubled, or billed without an audit row, every window the old version
 * planned must end done, and `status` must report what either version finished.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDb } from '../../src/db/connection.js';
import { dropDatabase } from '../../src/db/migrate.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { packageRoot } from '../../src/paths.js';
import { asStored, storedEvents } from '../support/events.js';
import { uniqueName } from '../support/isolation.js';
import { startHoldProxy, type HoldProxy } from './support/hold-proxy.js';
import { PREVIOUS_RELEASE, previousRelease } from './support/previous-release.js';
import { pollUntil, runCli, transcript, type CliRun, type Exit } from './support/processes.js';

const MONTH = `${dataFolder}usgs/all_month_2025-08-19_2025-09-18.csv`;
const FROM = '2025-07-01T00:00:00Z';
const TO = '2025-09-19T00:00:00Z';
const RANGE = ['--from', FROM, '--to', TO];
/** After the data, so every window is in the gateway's past. */
const NOW = (): Date => new Date('2025-10-01T00:00:00Z');
/** Per call: slow enough that a window takes seconds, so a worker can be caught in the middle of one. */
const LATENCY_MS = 100;
const KEY = `upgrade-key-${randomBytes(6).toString('hex')}`;
const LOG_ROOT = join(tmpdir(), 'gi-upgrade-logs');

/** Time bounds of single CLI runs; the workers are ended by the test well before theirs. */
const SHORT_RUN_MS = 60_000;
const BACKFILL_RUN_MS = 180_000;
const WORKER_RUN_MS = 240_000;
/** One job at a time per worker, so that windows end up done, running and still queued, or shared. */
const ONE_JOB = { WORKER_CONCURRENCY: '1' };

let oldDir: string;
let catalog: EarthquakeEvent[];

beforeAll(async () => {
  [oldDir, catalog] = await Promise.all([previousRelease(PREVIOUS_RELEASE), loadUsgsFile(MONTH)]);
  const from = Date.parse(FROM);
  const to = Date.parse(TO);
  catalog = catalog.filter((e) => Date.parse(e.time) >= from && Date.parse(e.time) <= to);
}, 360_000);

interface PartitionRow {
  streamKey: string;
  partitionKey: string;
  state: string;
  calls: number;
  lastErrorKind: string | null;
  lastError: string | null;
}

/** One variant's database, queue prefix, gateway and processes. */
interface Upgrade {
  dbUrl: string;
  pool: pg.Pool;
  prefix: string;
  emulator: RunningEmulator;
  /** Between the old version and the gateway: counts its calls, and can hold them. */
  proxy: HoldProxy;
  processes: CliRun[];
  logDir: string;
}

async function openUpgrade(name: string): Promise<Upgrade> {
  const dbName = uniqueName('gi_upgrade');
  const admin = new pg.Client({ connectionString: inject('databaseUrl') });
  await admin.connect();
  try {
    // Created empty here: the old version's own migrate must build its schema from nothing.
    await admin.query(`create database ${pg.escapeIdentifier(dbName)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${dbName}`;
  const emulator = await startEmulator({
    key: KEY,
    earthquakeFiles: [MONTH],
    indicatorFiles: [],
    order: 'newest',
    seed: 11,
    now: NOW,
    latencyMs: LATENCY_MS,
  });
  return {
    dbUrl: url.toString(),
    pool: quietPool(url.toString()),
    prefix: uniqueName('gi-upgrade'),
    emulator,
    proxy: await startHoldProxy(emulator.url),
    processes: [],
    logDir: join(LOG_ROOT, `${name}-${new Date().toISOString().replace(/[:.]/g, '')}`),
  };
}

/**
 * A pool whose clients' lost connections are heard: the drop at the end terminates their backends
 * (57P01) after `pool.end()` resolved, and an unheard error there fails the run.
 */
function quietPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  return pool;
}

async function closeUpgrade(u: Upgrade | undefined): Promise<void> {
  if (!u) return;
  await Promise.all(u.processes.map((p) => p.stop('SIGKILL')));
  mkdirSync(u.logDir, { recursive: true });
  u.processes.forEach((p, i) => {
    writeFileSync(join(u.logDir, `${i}-${p.label}.log`), `${p.stdout()}\n--- stderr ---\n${p.stderr()}`);
  });
  await u.proxy.close();
  await u.emulator.close();
  await u.pool.end();
  await dropDatabase(u.dbUrl);
  // The queues live under the variant's prefix only: nothing of them is left for the next run.
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  try {
    const keys = await redis.keys(`${u.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

type Version = 'old' | 'new';

/**
 * What both versions read: the old version's variables are a subset of the current one's (its
 * README). The old version reaches the gateway through the proxy, the current one directly.
 */
function cliEnv(u: Upgrade, version: Version, extra: Record<string, string>): Record<string, string> {
  return {
    DATABASE_URL: u.dbUrl,
    REDIS_URL: inject('redisUrl'),
    QUEUE_PREFIX: u.prefix,
    GATEWAY_BASE_URL: version === 'old' ? u.proxy.url : u.emulator.url,
    MARKET_KEY: KEY,
    RETRY_BASE_DELAY_MS: '50',
    SHUTDOWN_DEADLINE_MS: '5000',
    GATEWAY_TIMEOUT_MS: '30000',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

interface StartOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
}

function start(u: Upgrade, version: Version, args: string[], options: StartOptions = {}): CliRun {
  const cwd = version === 'old' ? oldDir : packageRoot;
  const label = `${version}-${args.slice(0, 2).join('-')}`;
  const p = runCli(label, cwd, args, cliEnv(u, version, options.env ?? {}), options.timeoutMs ?? WORKER_RUN_MS);
  u.processes.push(p);
  return p;
}

interface Finished {
  exit: Exit;
  run: CliRun;
}

/** Runs a command to its end; the exit and the process, for assertions that print what it said. */
async function runToEnd(u: Upgrade, version: Version, args: string[], options: StartOptions = {}): Promise<Finished> {
  const run = start(u, version, args, { timeoutMs: SHORT_RUN_MS, ...options });
  return { exit: await run.exited, run };
}

function expectSuccess({ exit, run }: Finished): void {
  expect(exit.code, transcript(run, exit)).toBe(0);
}

/** Plain SQL: the same query reads the old version's schema and the current one. */
async function partitions(u: Upgrade): Promise<PartitionRow[]> {
  const { rows } = await u.pool.query<PartitionRow>(
    `select stream_key as "streamKey", partition_key as "partitionKey", state, calls,
            last_error_kind as "lastErrorKind", last_error as "lastError"
       from ingest_partitions order by window_start, partition_key`,
  );
  return rows;
}

function describeStates(rows: PartitionRow[]): string {
  return rows
    .map((p) => {
      const error = p.lastError ? `, last error [${p.lastErrorKind}] ${p.lastError}` : '';
      return `${p.streamKey} ${p.partitionKey}: ${p.state}, ${p.calls} calls${error}`;
    })
    .join('\n');
}

/** The end every variant must reach, whatever ran the windows. */
async function expectNothingLostDoubledOrUnbilled(u: Upgrade): Promise<void> {
  const parts = await partitions(u);
  // Soft: the checks below still say whether anything was lost or billed unaudited.
  expect
    .soft(
      parts.filter((p) => p.state !== 'done'),
      `partitions not done:\n${describeStates(parts)}`,
    )
    .toEqual([]);

  const db = openDb(u.dbUrl, { max: 2 });
  try {
    // Field for field: ids alone would miss an old version that wrote a field in another shape.
    expect(await storedEvents(db)).toEqual(asStored(catalog));
  } finally {
    await db.close();
  }

  const { rows } = await u.pool.query<{ calls: number; billed: number; units: number }>(
    `select count(*)::int as calls, (count(*) filter (where billed))::int as billed,
            coalesce(sum(units) filter (where billed), 0)::float8 as units
       from gateway_executions`,
  );
  const audit = rows[0]!;
  const calls = u.emulator.calls;
  const billed = calls.filter((c) => c.billed);
  expect({ calls: audit.calls, billed: audit.billed, units: audit.units }).toEqual({
    calls: calls.length,
    billed: billed.length,
    units: billed.reduce((n, c) => n + c.units, 0),
  });
}

interface Status extends Finished {
  /** The report of the backfilled stream alone: the jobs file's streams are reported too. */
  stream: string;
}

async function currentStatus(u: Upgrade, label: string): Promise<Status> {
  const { exit, run } = await runToEnd(u, 'new', ['status']);
  // The stream's block runs from its key to the next unindented line.
  const lines = run.stdout().split('\n');
  const first = lines.findIndex((l) => l === 'earthquake:all' || l.endsWith('(earthquake:all)'));
  const rest = first < 0 ? [] : lines.slice(first + 1);
  const end = rest.findIndex((l) => l !== '' && !l.startsWith(' '));
  const stream = first < 0 ? '' : [lines[first]!, ...(end < 0 ? rest : rest.slice(0, end))].join('\n');
  process.stdout.write(`${label}: exit ${exit.code}\n${stream}\n`);
  return { exit, run, stream };
}

/**
 * Status proves the whole backfilled range once every window of it is done, whichever version read
 * them: the stream is in no jobs file, so coverage is over what the backfills asked, with no gap.
 * Soft, like the partition check; the stored proofs are named, since status reads coverage from them.
 */
async function expectRangeCovered(u: Upgrade, status: Status): Promise<void> {
  const { rows } = await u.pool.query<{ lo: string; hi: string }>(
    'select lo::text, hi::text from coverage_proofs order by lo',
  );
  const proofs = rows.map((r) => `${new Date(Number(r.lo)).toISOString()} .. ${new Date(Number(r.hi)).toISOString()}`);
  const why = `status coverage of ${FROM} .. ${TO}; coverage_proofs: ${proofs.join(', ') || 'none'}`;
  expect.soft(status.stream, why).toContain(`coverage ${FROM} .. ${TO}: 100.00%, no gaps`);
}

/** The old version's migrate and a backfill planned but left to workers: three 31-day windows, all pending. */
async function oldVersionPlans(u: Upgrade): Promise<void> {
  expectSuccess(await runToEnd(u, 'old', ['migrate']));
  const planned = await runToEnd(u, 'old', ['backfill', 'earthquakes', ...RANGE]);
  expectSuccess(planned);
  expect(planned.run.stdout()).toContain('earthquake:all: 3 partitions planned, 3 jobs enqueued');
  expect((await partitions(u)).map((p) => p.state)).toEqual(['pending', 'pending', 'pending']);
}

describe(`upgrade from the previous release (${PREVIOUS_RELEASE}): an old worker killed mid-window`, () => {
  let u: Upgrade;
  beforeAll(async () => {
    u = await openUpgrade('killed-old-worker');
  });
  afterAll(async () => {
    await closeUpgrade(u);
  });

  it('the current version migrates, reports what the old one did, and finishes every window', async () => {
    await oldVersionPlans(u);
    const worker = start(u, 'old', ['worker'], { env: ONE_JOB });
    await pollUntil(
      'the old worker finished a window and made 3 calls in the next',
      async () => {
        const parts = await partitions(u);
        return parts.some((p) => p.state === 'done') && parts.some((p) => p.state === 'running' && p.calls >= 3);
      },
      60_000,
    );
    u.proxy.hold();
    // Killed while it waits on a call the gateway never sees: every call the gateway answered is audited.
    await pollUntil('the old worker asked a held question', async () => u.proxy.held >= 1, 30_000);
    const killed = await worker.stop('SIGKILL');
    expect(killed.signal, transcript(worker, killed)).toBe('SIGKILL');
    const left = await partitions(u);
    const count = (state: string) => left.filter((p) => p.state === state).length;
    process.stdout.write(`left by the old version:\n${describeStates(left)}\n`);
    const shape = { done: count('done') >= 1, running: count('running'), pending: count('pending') >= 1 };
    expect(shape, describeStates(left)).toEqual({ done: true, running: 1, pending: true });
    const doneWindows = left.filter((p) => p.state === 'done').map((p) => p.partitionKey);

    expectSuccess(await runToEnd(u, 'new', ['migrate']));
    const before = await currentStatus(u, 'status-after-migrate');
    expect(before.exit.code, transcript(before.run, before.exit)).toBe(0);
    expect(before.stream, transcript(before.run, before.exit)).toMatch(/coverage /);
    expect(before.stream).not.toContain('nothing ingested yet');
    expect(before.stream).not.toMatch(/coverage .*: 0\.00%/);
    expect(before.stream).toContain(`partitions: ${count('done')} done`);
    // Migration 0006 proves the windows the old version finished: status shows them as proven complete.
    for (const key of doneWindows) expect(before.stream).toContain(key.replace('/', ' .. '));

    const backfillArgs = ['backfill', 'earthquakes', ...RANGE, '--wait', '--inline', '--yes'];
    const backfill = await runToEnd(u, 'new', backfillArgs, { timeoutMs: BACKFILL_RUN_MS });
    expectSuccess(backfill);
    process.stdout.write(`current backfill: ${backfill.run.stdout()}`);

    const parts = await partitions(u);
    process.stdout.write(`after the current backfill (${u.emulator.calls.length} calls):\n${describeStates(parts)}\n`);
    expect(
      parts.filter((p) => p.state === 'failed'),
      describeStates(parts),
    ).toEqual([]);
    // The windows the old version finished stay done.
    for (const key of doneWindows) expect(parts.find((p) => p.partitionKey === key)?.state).toBe('done');
    await expectNothingLostDoubledOrUnbilled(u);
    const after = await currentStatus(u, 'status-after-backfill');
    expect(after.exit.code, transcript(after.run, after.exit)).toBe(0);
    await expectRangeCovered(u, after);
  });
});

describe(`upgrade from the previous release (${PREVIOUS_RELEASE}): old and current workers on the same queues`, () => {
  let u: Upgrade;
  beforeAll(async () => {
    u = await openUpgrade('old-and-new-workers');
  });
  afterAll(async () => {
    await closeUpgrade(u);
  });

  it('every window the old version planned ends done, nothing lost, doubled or billed unaudited', async () => {
    await oldVersionPlans(u);
    // docs/production.md's rolling upgrade: the new version's migrations first, then old and new replicas side by side.
    expectSuccess(await runToEnd(u, 'new', ['migrate']));
    // The old worker first, the current one while it reads: both take windows.
    const oldWorker = start(u, 'old', ['worker'], { env: ONE_JOB });
    await pollUntil('the old worker made its first call', async () => u.proxy.forwarded >= 1, 60_000);
    const newWorker = start(u, 'new', ['worker'], { env: ONE_JOB });
    const ended = await pollUntil(
      'every partition done (or one failed)',
      async () => {
        const parts = await partitions(u);
        const over = parts.some((p) => p.state === 'failed') || parts.every((p) => p.state === 'done');
        return parts.length > 0 && over && parts;
      },
      150_000,
      250,
    );
    expect(
      ended.filter((p) => p.state === 'failed'),
      describeStates(ended),
    ).toEqual([]);
    const [oldExit, newExit] = await Promise.all([oldWorker.stop('SIGTERM'), newWorker.stop('SIGTERM')]);
    expect(oldExit.code, transcript(oldWorker, oldExit)).toBe(0);
    expect(newExit.code, transcript(newWorker, newExit)).toBe(0);

    const byOld = u.proxy.forwarded;
    const byNew = u.emulator.calls.length - byOld;
    const states = describeStates(await partitions(u));
    process.stdout.write(`calls: ${byOld} by the old worker, ${byNew} by the current one\n${states}\n`);
    expect(byOld).toBeGreaterThan(0);
    expect(byNew).toBeGreaterThan(0);
    await expectNothingLostDoubledOrUnbilled(u);
    const after = await currentStatus(u, 'status-after-workers');
    expect(after.exit.code, transcript(after.run, after.exit)).toBe(0);
    expect(after.stream).not.toContain('nothing ingested yet');
    await expectRangeCovered(u, after);
  });
});

describe(`upgrade from the previous release (${PREVIOUS_RELEASE}): a user's steps across it`, () => {
  let u: Upgrade;
  beforeAll(async () => {
    u = await openUpgrade('steps-across');
  });
  afterAll(async () => {
    await closeUpgrade(u);
  });

  /** What was learned of the cap has lapsed by each step: nothing carries from one window to the next. */
  const LAPSED = { GATEWAY_KNOWLEDGE_TTL_MS: '0' };

  it('the old version reads a month and queues the weeks before it; the current one finishes them and goes on', async () => {
    expectSuccess(await runToEnd(u, 'old', ['migrate']));
    const month = ['backfill', 'earthquakes', '--from', '2025-08-19T00:00:00Z', '--to', TO, '--wait', '--inline'];
    expectSuccess(await runToEnd(u, 'old', month, { timeoutMs: BACKFILL_RUN_MS }));
    const weeks = ['backfill', 'earthquakes', '--from', FROM, '--to', '2025-08-19T00:00:00Z'];
    expectSuccess(await runToEnd(u, 'old', weeks));
    const left = await partitions(u);
    process.stdout.write(`left by the old version:\n${describeStates(left)}\n`);
    expect(left.some((p) => p.state === 'pending')).toBe(true);

    expectSuccess(await runToEnd(u, 'new', ['migrate']));
    const all = ['backfill', 'earthquakes', ...RANGE, '--wait', '--inline', '--yes'];
    const backfill = await runToEnd(u, 'new', all, { env: LAPSED, timeoutMs: BACKFILL_RUN_MS });
    expectSuccess(backfill);
    const parts = await partitions(u);
    expect(
      parts.filter((p) => p.state !== 'done'),
      describeStates(parts),
    ).toEqual([]);
    // The weeks the old version queued hold no event: a call each (and a probe at most for the step).
    const queued = parts.filter((p) => p.partitionKey < '2025-08-19');
    for (const p of queued) expect(p.calls, describeStates(parts)).toBeLessThanOrEqual(2);
    const status = await currentStatus(u, 'status-after-upgrade');
    expect(status.exit.code, transcript(status.run, status.exit)).toBe(0);

    // Steps after the upgrade: a refresh of all of it whose windows start elsewhere, then the same backfill again.
    const refresh = await runToEnd(u, 'new', [...all, '--refresh'], { env: LAPSED, timeoutMs: BACKFILL_RUN_MS });
    expectSuccess(refresh);
    const again = await runToEnd(u, 'new', all, { env: LAPSED });
    expectSuccess(again);
    expect(again.run.stdout()).toMatch(/0 jobs enqueued|nothing to fetch|already covered/);
    await expectNothingLostDoubledOrUnbilled(u);
    const after = await currentStatus(u, 'status-after-steps');
    expect(after.exit.code, transcript(after.run, after.exit)).toBe(0);
  });
});
