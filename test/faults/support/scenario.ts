import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll } from 'vitest';
import { Redis } from 'ioredis';
import { openDb, type DbHandle } from '../../../src/db/connection.js';
import { runMigrations } from '../../../src/db/migrate.js';
import { ingestPartitions } from '../../../src/db/schema.js';
import {
  loadUsgsFile,
  startEmulator,
  type EventOrder,
  type FaultRule,
  type RunningEmulator,
} from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../../src/gateway/schemas.js';
import { closeQueue, QUEUE_NAMES } from '../../../src/queue/queues.js';
import { ensureStopped, spawnCli, type CliProcess } from '../../support/run-cli.js';
import { BACKFILL_ARGS, MONTH_FILE, NOW } from './data.js';
import { startHoldProxy, type HoldProxy } from './hold-proxy.js';
import { pollUntil } from './host.js';
import { createPostgres, type PrivatePostgres } from './postgres.js';
import { createRedis, type PrivateRedis } from './redis.js';

/** Where each scenario leaves the logs of its processes and servers, for whoever reads a failure. */
export const LOG_ROOT = join(tmpdir(), 'gi-faults-logs');

export interface Services {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  destroy(): Promise<void>;
}

export async function startServices(): Promise<Services> {
  const [pg, redis] = await Promise.all([createPostgres(), createRedis()]);
  return { pg, redis, destroy: async () => void (await Promise.all([pg.destroy(), redis.destroy()])) };
}

/**
 * A describe block's private servers and the real month's catalog: started before its tests,
 * destroyed after them. Read the fields inside tests (they are set by then).
 */
export function suiteFixture(): { services: Services; catalog: EarthquakeEvent[] } {
  const fixture = {} as { services: Services; catalog: EarthquakeEvent[] };
  beforeAll(async () => {
    [fixture.services, fixture.catalog] = await Promise.all([startServices(), loadUsgsFile(MONTH_FILE)]);
  });
  afterAll(async () => {
    await fixture.services?.destroy();
  });
  return fixture;
}

export interface ScenarioOptions {
  name: string;
  services: Services;
  order?: EventOrder;
  seed?: number;
  latencyMs?: number;
  faults?: FaultRule[];
  /** Request numbers (1-based, as the proxy counts them) whose answers are never delivered. */
  hold?: number[];
  /** Added to every CLI process's environment. */
  env?: Record<string, string>;
}

export interface Partition {
  partitionKey: string;
  state: string;
  windowStart: Date | null;
  windowEnd: Date | null;
  lastErrorKind: string | null;
  lastError: string | null;
}

export interface Scenario {
  name: string;
  services: Services;
  /** The scenario's database, as its CLI processes reach it unless told otherwise. */
  dbUrl: string;
  /** The test's own connection to the scenario's database. */
  db: DbHandle;
  emulator: RunningEmulator;
  /** Every CLI process reaches the gateway through it: wall-clock times of each call, swallowed answers. */
  proxy: HoldProxy;
  startedAt: number;
  logDir: string;
  /** What the scenario did when, in seconds since it started: the evidence a failure is read against. */
  timeline: string[];
  note(event: string): void;
  /** Seconds since the scenario started, for notes and summaries. */
  elapsed(at?: number): string;
  worker(label: string, extra?: Record<string, string>): CliProcess;
  /** `backfill earthquakes --from 2025-05-01 --to 2025-06-10` plus `flags`. */
  backfill(label: string, flags: string[], extra?: Record<string, string>): CliProcess;
  partitions(): Promise<Partition[]>;
  /** Waits until every partition is done; false when `timeoutMs` passes first. */
  allDone(timeoutMs: number): Promise<boolean>;
  /** One line on the BullMQ queue: job counts by state and why failed jobs failed. */
  queueState(): Promise<string>;
  finish(): Promise<void>;
}

const KEY = `faults-key-${randomBytes(6).toString('hex')}`;

function slug(name: string): string {
  return name
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

async function openEmulator(o: ScenarioOptions): Promise<RunningEmulator> {
  return startEmulator({
    key: KEY,
    earthquakeFiles: [MONTH_FILE],
    indicatorFiles: [],
    order: o.order ?? 'newest',
    seed: o.seed ?? 1,
    now: NOW,
    latencyMs: o.latencyMs ?? 0,
    faults: o.faults ?? [],
    retryAfterSeconds: 1,
  });
}

async function readPartitions(db: DbHandle): Promise<Partition[]> {
  const rows = await db.db.select().from(ingestPartitions).orderBy(ingestPartitions.partitionKey);
  return rows.map((r) => ({
    partitionKey: r.partitionKey,
    state: r.state,
    windowStart: r.windowStart,
    windowEnd: r.windowEnd,
    lastErrorKind: r.lastErrorKind,
    lastError: r.lastError,
  }));
}

/** The queue as BullMQ sees it, read on a connection of its own that gives up fast while Redis is down. */
async function describeQueue(redisUrl: string, prefix: string): Promise<string> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000, retryStrategy: () => null });
  connection.on('error', () => undefined);
  const queue = new Queue(QUEUE_NAMES.earthquake, { connection, prefix });
  try {
    const counts = await queue.getJobCounts(
      'waiting',
      'active',
      'delayed',
      'prioritized',
      'paused',
      'completed',
      'failed',
    );
    const failed = await queue.getFailed();
    const reasons = failed.map((j) => `${j.id}: ${j.failedReason} (attempts ${j.attemptsMade})`);
    return `queue ${JSON.stringify(counts)}${reasons.length > 0 ? `; failed jobs: ${reasons.join(' | ')}` : ''}`;
  } catch (e) {
    return `queue unreadable: ${(e as Error).message}`;
  } finally {
    await closeQueue(queue).catch(() => undefined);
    connection.disconnect();
  }
}

interface Timeline {
  lines: string[];
  note: (event: string) => void;
  elapsed: (at?: number) => string;
}

function timelineFrom(startedAt: number): Timeline {
  const lines: string[] = [];
  const elapsed = (at = Date.now()) => `+${((at - startedAt) / 1000).toFixed(2)}s`;
  return { lines, elapsed, note: (event) => void lines.push(`${elapsed()} ${event}`) };
}

/** The environment of every CLI process of a scenario: short retries, and the gateway behind the proxy. */
function cliEnv(
  o: ScenarioOptions,
  dbUrl: string,
  prefix: string,
  gatewayUrl: string,
): (extra?: Record<string, string>) => Record<string, string> {
  return (extra = {}) => ({
    DATABASE_URL: dbUrl,
    REDIS_URL: o.services.redis.url,
    QUEUE_PREFIX: prefix,
    GATEWAY_BASE_URL: gatewayUrl,
    MARKET_KEY: KEY,
    RETRY_BASE_DELAY_MS: '50',
    SHUTDOWN_DEADLINE_MS: '5000',
    GATEWAY_TIMEOUT_MS: '10000',
    LOG_LEVEL: 'info',
    ...o.env,
    ...extra,
  });
}

interface Processes {
  spawn(label: string, args: string[], extra?: Record<string, string>): CliProcess;
  /** Kills whatever still runs and writes every process's output to `dir`. */
  end(dir: string): Promise<void>;
}

/** Every CLI process of a scenario, so that none outlives it and every log is kept. */
function trackProcesses(env: (extra?: Record<string, string>) => Record<string, string>, t: Timeline): Processes {
  const all = new Map<string, CliProcess>();
  return {
    spawn(label, args, extra) {
      if (all.has(label)) throw new Error(`process label ${label} used twice`);
      const p = spawnCli(args, env(extra));
      all.set(label, p);
      t.note(`${label}: started (${args.join(' ')})`);
      void p.exited.then(({ code, signal }) => t.note(`${label}: exited ${signal ?? `code ${code}`}`));
      return p;
    },
    async end(dir) {
      await Promise.all([...all.values()].map((p) => ensureStopped(p)));
      mkdirSync(dir, { recursive: true });
      for (const [label, p] of all)
        writeFileSync(join(dir, `${label}.log`), `${p.stdout()}\n--- stderr ---\n${p.stderr()}`);
      writeFileSync(join(dir, 'timeline.txt'), `${t.lines.join('\n')}\n`);
    },
  };
}

async function allDoneWithin(db: DbHandle, timeoutMs: number): Promise<boolean> {
  const done = await pollUntil(
    async () => {
      const parts = await readPartitions(db);
      return parts.length > 0 && parts.every((p) => p.state === 'done');
    },
    timeoutMs,
    250,
  );
  return done !== null;
}

/**
 * One scenario: its own database (migrated) and queue prefix on the given private servers, an
 * emulator on the real month behind a proxy that can swallow answers, and CLI processes.
 */
export async function openScenario(o: ScenarioOptions): Promise<Scenario> {
  const startedAt = Date.now();
  const id = `${slug(o.name).slice(0, 32)}-${randomBytes(3).toString('hex')}`;
  const dbUrl = o.services.pg.url(`gi_faults_${id.replace(/-/g, '_')}`);
  await runMigrations(dbUrl);
  const db = openDb(dbUrl, { max: 4 });
  const emulator = await openEmulator(o);
  const proxy = await startHoldProxy(emulator.url, new Set(o.hold ?? []));
  const prefix = `gi-faults-${id}`;
  const logDir = join(LOG_ROOT, `${slug(o.name)}-${new Date(startedAt).toISOString().replace(/[:.]/g, '')}`);
  const t = timelineFrom(startedAt);
  const processes = trackProcesses(cliEnv(o, dbUrl, prefix, proxy.url), t);
  return {
    name: o.name,
    services: o.services,
    dbUrl,
    db,
    emulator,
    proxy,
    startedAt,
    logDir,
    timeline: t.lines,
    note: t.note,
    elapsed: t.elapsed,
    worker: (label, extra) => processes.spawn(label, ['worker'], extra),
    backfill: (label, flags, extra) =>
      processes.spawn(label, ['backfill', 'earthquakes', ...BACKFILL_ARGS, ...flags], extra),
    partitions: () => readPartitions(db),
    allDone: (timeoutMs) => allDoneWithin(db, timeoutMs),
    queueState: () => describeQueue(o.services.redis.url, prefix),
    async finish() {
      await processes.end(logDir);
      // The servers are shared by a file's scenarios: their logs so far, for reading beside the processes'.
      writeFileSync(join(logDir, 'postgres-server.log'), o.services.pg.log());
      writeFileSync(join(logDir, 'redis-server.log'), o.services.redis.log());
      await proxy.close();
      await emulator.close();
      await db.close();
    },
  };
}
