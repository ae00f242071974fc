import type { ResolvedEnv } from '../config/env.js';
import type { DbHandle } from '../db/connection.js';
import type { Gateway } from '../gateway/client.js';
import { waitForPartitions, type PartitionRef } from '../ingest/wait.js';
import type { Log } from '../log.js';
import type { CallObserver } from '../worker/deps.js';
import { TruncationMemory } from '../worker/truncation-memory.js';
import { startWorkers, type RunningWorkers } from '../worker/run-workers.js';
import { EXIT } from './exit.js';
import { progressReporter } from './progress.js';
import { cliLog, connectDb, connectRedis, gatewayFromEnv, openQueues } from './runtime.js';
import type { Redis } from 'ioredis';

export interface Session {
  env: ResolvedEnv;
  log: Log;
  db: DbHandle;
  redis: Redis;
  queues: ReturnType<typeof openQueues>;
  gateway: Gateway | null;
  close(): Promise<void>;
}

/** Connects everything a command needs, failing fast (5 s) with how to start what is down. */
export async function openSession(env: ResolvedEnv, options: { needGateway: boolean }): Promise<Session> {
  const gateway = options.needGateway ? gatewayFromEnv(env) : null;
  const db = await connectDb(env);
  let redis: Redis;
  try {
    redis = await connectRedis(env, options.needGateway ? 'worker' : 'producer');
  } catch (e) {
    await db.close();
    throw e;
  }
  const queues = openQueues(env, redis);
  return {
    env,
    log: cliLog(env),
    db,
    redis,
    queues,
    gateway,
    async close() {
      await Promise.all(Object.values(queues).map((q) => q.close()));
      await gateway?.close();
      redis.disconnect();
      await db.close();
    },
  };
}

/** `observer` sees every gateway call (the service feeds Prometheus with it). */
export function startSessionWorkers(s: Session, observer?: CallObserver): RunningWorkers {
  return startWorkers(
    { connection: s.redis, prefix: s.env.queuePrefix, concurrency: s.env.workerConcurrency, retryBaseDelayMs: s.env.retryBaseDelayMs },
    { gateway: s.gateway!, db: s.db.db, log: s.log, truncation: new TruncationMemory(s.env.truncationVerdictTtlMs), observer },
  );
}

/** `--wait` / `--inline`: waits for the partitions with progress; 0 only if every one is done. */
export async function awaitBackfill(s: Session, refs: PartitionRef[], inline: boolean): Promise<number> {
  const workers = inline ? startSessionWorkers(s) : null;
  const reporter = progressReporter(process.stderr, 'backfill');
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const p = await waitForPartitions(s.db.db, refs, (p) => reporter.update(p), { signal: stop.signal });
    reporter.stop();
    process.stdout.write(`finished: ${p.done} done, ${p.failed} failed, ${p.total - p.done - p.failed} unfinished of ${p.total} partitions\n`);
    return p.done === p.total ? EXIT.ok : EXIT.failed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await workers?.close(s.env.shutdownDeadlineMs);
  }
}
