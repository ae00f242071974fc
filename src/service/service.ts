/**
 * The long-running service behind `gateway-ingest start`: window workers, the tick worker, job
 * schedulers kept in step with jobs.yaml, and the HTTP endpoints. Connections come from the caller.
 */
import type { Queue, Worker } from 'bullmq';
import type { ResolvedEnv } from '../config/env.js';
import type { ResolvedJobsFile } from '../config/jobs-file.js';
import type { DbHandle } from '../db/connection.js';
import type { Log } from '../log.js';
import type { CallObserver } from '../worker/deps.js';
import type { RunningWorkers } from '../worker/run-workers.js';
import { watchJobsFile } from './config-watch.js';
import { createDashboard } from './dashboard/index.js';
import { startHttpServer } from './http.js';
import { startRetention } from './retention.js';
import { createServiceMetrics } from './metrics.js';
import { desiredSchedulers, openTickQueue, syncSchedulers } from './schedulers.js';
import { closeQueue } from '../queue/queues.js';
import type { RedisConnection } from '../queue/redis.js';
import { startTickWorker } from './tick.js';

export interface ServiceDeps {
  env: ResolvedEnv;
  log: Log;
  db: DbHandle;
  redis: RedisConnection;
  queues: { earthquake: Queue; indicator: Queue };
  /** Starts the earthquake and indicator workers, reporting calls to `observer`. */
  startWorkers(observer: CallObserver): RunningWorkers;
}

export interface ServiceOptions {
  /** How often jobs.yaml is polled for edits; 0: only on `reload()`. */
  configPollMs?: number;
  /** How often schedulers are re-synced anyway, e.g. after Redis lost its data. */
  resyncMs?: number;
  /** How often audit rows past AUDIT_RETENTION_DAYS are rolled up (also once at start); default hourly. */
  retentionIntervalMs?: number;
  /** DASHBOARD_TOKEN: Bull Board's actions need it; null (default) leaves the board read-only. */
  dashboardToken?: string | null;
  /** BILLED_CALLS_PER_DAY, shown on the status page and as the budget gauge; null: no cap. */
  budget?: { billedCallsPerDay: number | null };
}

export interface RunningService {
  port: number;
  /** Re-reads jobs.yaml and syncs schedulers (SIGHUP). */
  reload(): Promise<void>;
  /** Stops taking jobs, lets in-flight ones finish within `deadlineMs`, closes what it opened. */
  stop(deadlineMs: number): Promise<{ cutOff: boolean }>;
}

export const DEFAULT_CONFIG_POLL_MS = 5_000;
export const DEFAULT_RESYNC_MS = 60_000;

/** Resolves true when the worker had to be forced closed at the deadline. */
async function closeWorker(worker: Worker, deadlineMs: number): Promise<boolean> {
  const graceful = worker.close().then(() => false);
  const deadline = new Promise<boolean>((resolve) => setTimeout(() => resolve(true), deadlineMs).unref());
  const cutOff = await Promise.race([graceful, deadline]);
  if (cutOff) await worker.close(true);
  return cutOff;
}

function redisCheck(redis: RedisConnection): () => Promise<unknown> {
  // Commands queue while disconnected (workers never give up on Redis): ask only when connected.
  return () => (redis.status === 'ready' ? redis.ping() : Promise.reject(new Error(`connection is ${redis.status}`)));
}

export async function startService(
  deps: ServiceDeps,
  file: ResolvedJobsFile,
  o: ServiceOptions = {},
): Promise<RunningService> {
  const { env, log } = deps;
  const tickQueue = openTickQueue(deps.redis, env.queuePrefix);
  const queues = [deps.queues.earthquake, deps.queues.indicator, tickQueue];
  // An 'error' event without a listener would throw and end the process on a Redis outage.
  for (const q of queues)
    q.on('error', (err) => log.warn({ err: err.message, queue: q.name }, 'queue connection error'));
  const budget = o.budget ?? { billedCallsPerDay: null };
  const metrics = createServiceMetrics({ queues, db: deps.db.db, billedCallsPerDay: budget.billedCallsPerDay });
  const onError = (err: unknown) => log.error({ err }, 'http endpoint error');
  // `watch` exists before the first request is read: nothing awaits between listening and creating it.
  const routes = createDashboard({
    db: deps.db.db,
    jobsFile: () => watch.current(),
    budget,
    queues,
    token: o.dashboardToken ?? null,
    onError,
  });
  const http = await startHttpServer({
    port: env.httpPort,
    registry: metrics.registry,
    checks: { postgres: () => deps.db.pool.query('select 1'), redis: redisCheck(deps.redis) },
    routes,
    onError,
  }).catch(async (err: unknown) => {
    await closeQueue(tickQueue);
    throw err;
  });
  log.info({ port: http.port, dashboard: o.dashboardToken ? 'token' : 'read-only' }, 'http listening');

  let syncing: Promise<void> = Promise.resolve();
  const sync = (): Promise<void> => {
    syncing = syncing
      .then(async () => {
        const r = await syncSchedulers(tickQueue, desiredSchedulers(watch.current()));
        log.info(r, 'schedulers synced');
      })
      .catch((err: unknown) => log.error({ err }, 'scheduler sync failed; retrying at the next resync'));
    return syncing;
  };
  const watch = watchJobsFile(file, {
    intervalMs: o.configPollMs ?? DEFAULT_CONFIG_POLL_MS,
    log,
    onChange: () => void sync(),
  });

  const windows = deps.startWorkers(metrics.observer);
  const ticks = startTickWorker(
    { connection: deps.redis, prefix: env.queuePrefix },
    { db: deps.db.db, queues: deps.queues, jobsFile: watch.current, log },
  );
  metrics.watchWorkers([...windows.workers, ticks]);
  await sync();
  const resync = setInterval(() => void sync(), o.resyncMs ?? DEFAULT_RESYNC_MS).unref();
  const retention = startRetention({
    db: deps.db.db,
    log,
    retentionDays: env.auditRetentionDays,
    intervalMs: o.retentionIntervalMs,
  });

  return {
    port: http.port,
    async reload() {
      if (!(await watch.reload())) await sync();
    },
    async stop(deadlineMs) {
      clearInterval(resync);
      await retention.stop();
      watch.close();
      await http.close();
      const [windowsResult, tickCutOff] = await Promise.all([
        windows.close(deadlineMs),
        closeWorker(ticks, deadlineMs),
      ]);
      await syncing;
      await closeQueue(tickQueue);
      return { cutOff: windowsResult.cutOff || tickCutOff };
    },
  };
}
