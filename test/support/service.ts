import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { openSession, startSessionWorkers, type Session } from '../../src/cli/session.js';
import { parseEnv } from '../../src/config/env.js';
import { loadJobsFile } from '../../src/config/jobs-file.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { TICK_QUEUE } from '../../src/service/schedulers.js';
import { closeQueue, QUEUE_NAMES } from '../../src/queue/queues.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/service.js';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { createTestDatabase, redisUrl, trustGatewayCap, uniquePrefix, type TestDatabase } from './isolation.js';

export const randomKey = (): string => `test-key-${randomBytes(8).toString('hex')}`;

/** Redis URLs need a db index for the CLI; tests all share db 0 and differ by queue prefix. */
export function redisUrlWithDb(): string {
  const url = new URL(redisUrl());
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/0';
  return url.toString();
}

export interface ServiceEnvArgs {
  databaseUrl: string;
  prefix: string;
  gatewayUrl: string;
  key: string;
  extra?: Record<string, string>;
}

/** The environment `gateway-ingest start` reads, with short retries and an any-free-port server. */
export function serviceEnv(a: ServiceEnvArgs): Record<string, string> {
  return {
    DATABASE_URL: a.databaseUrl,
    REDIS_URL: redisUrlWithDb(),
    GATEWAY_BASE_URL: a.gatewayUrl,
    MARKET_KEY: a.key,
    QUEUE_PREFIX: a.prefix,
    HTTP_PORT: '0',
    SHUTDOWN_DEADLINE_MS: '10000',
    RETRY_BASE_DELAY_MS: '50',
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
    ...a.extra,
  };
}

export interface JobsDir {
  path: string;
  write(yaml: string): void;
  remove(): void;
}

export function jobsDir(): JobsDir {
  const dir = mkdtempSync(join(tmpdir(), 'gi-jobs-'));
  const path = join(dir, 'jobs.yaml');
  return {
    path,
    write: (yaml) => writeFileSync(path, yaml),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface InProcessService {
  session: Session;
  service: RunningService;
  url: string;
  stop(): Promise<void>;
}

/** `start` without the process: the same wiring, for tests that look inside. */
export async function startInProcess(
  a: ServiceEnvArgs,
  jobsPath: string,
  o: ServiceOptions = {},
): Promise<InProcessService> {
  const env = parseEnv(serviceEnv({ ...a, extra: { LOG_LEVEL: 'warn', ...a.extra } }));
  const file = await loadJobsFile(jobsPath);
  const session = await openSession(env, { needGateway: true });
  const service = await startService(
    { ...session, startWorkers: (observer) => startSessionWorkers(session, observer) },
    file,
    {
      configPollMs: 0,
      ...o,
    },
  );
  return {
    session,
    service,
    url: `http://127.0.0.1:${service.port}`,
    async stop() {
      await service.stop(5_000);
      await session.close();
    },
  };
}

/** A tick queue handle on its own connection, for looking at schedulers from outside. */
export function tickQueue(prefix: string): { queue: Queue; close(): Promise<void> } {
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  const queue = new Queue(TICK_QUEUE, { connection, prefix });
  return {
    queue,
    async close() {
      await closeQueue(queue);
      connection.disconnect();
    },
  };
}

/** Handles on the earthquake and indicator queues on their own connection, for looking at them from outside. */
export function ingestQueues(prefix: string): { queues: Queue[]; close(): Promise<void> } {
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  const queues = Object.values(QUEUE_NAMES).map((name) => new Queue(name, { connection, prefix }));
  return {
    queues,
    async close() {
      await Promise.all(queues.map(closeQueue));
      connection.disconnect();
    },
  };
}

/** Removes every key under a prefix, so shared Redis does not fill up with test queues. */
export async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl());
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export { waitFor } from './wait.js';

/** A hand-made catalog event in the gateway's wire shape. */
export function quake(id: string, timeMs: number, magnitude: number, place: string): EarthquakeEvent {
  return {
    id,
    time: new Date(timeMs).toISOString(),
    magnitude,
    magnitude_type: 'ml',
    place,
    latitude: 35.1,
    longitude: -117.5,
    depth_km: 7.5,
    tsunami_flag: false,
    url: `https://earthquake.usgs.gov/earthquakes/eventpage/${id}`,
  };
}

/** A test database, an emulator, a jobs.yaml and the `start` service on them, all owned by one test file. */
export interface ServiceFixture {
  db: TestDatabase;
  /** Replaceable: a test may restart the gateway (same port) with another catalog. */
  emulator: RunningEmulator;
  svc: InProcessService;
  jobs: JobsDir;
  prefix: string;
  key: string;
  stop(): Promise<void>;
}

/** Starts the service on a fresh database against an emulator serving `events` (cap trusted, no probe call). */
export async function startServiceFixture(o: {
  events: EarthquakeEvent[];
  indicatorFiles: string[];
  jobsYaml: string;
  key: string;
  prefix?: string;
}): Promise<ServiceFixture> {
  const prefix = o.prefix ?? uniquePrefix();
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: o.key, events: o.events, indicatorFiles: o.indicatorFiles });
  await trustGatewayCap(db, emulator.url);
  const jobs = jobsDir();
  jobs.write(o.jobsYaml);
  const svc = await startInProcess({ databaseUrl: db.url, prefix, gatewayUrl: emulator.url, key: o.key }, jobs.path);
  const f: ServiceFixture = {
    db,
    emulator,
    svc,
    jobs,
    prefix,
    key: o.key,
    async stop() {
      await f.svc.stop();
      await f.emulator.close();
      await db.drop();
      jobs.remove();
      await dropPrefix(prefix);
    },
  };
  return f;
}
