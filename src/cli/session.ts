import type { ResolvedEnv } from '../config/env.js';
import type { DbHandle } from '../db/connection.js';
import type { Gateway } from '../gateway/client.js';
import { waitForPartitions, type PartitionRef } from '../ingest/wait.js';
import { silentLog, type Log } from '../log.js';
import { startReconciler } from '../ingest/reconcile.js';
import { backfillHalt } from '../ingest/backfills.js';
import type { Halt } from '../domain/backfill.js';
import { toRfc3339 } from '../domain/time.js';
import { operationOfStreamKey } from '../domain/streams.js';
import type { CallObserver } from '../worker/deps.js';
import { startWorkers, type RunningWorkers } from '../worker/run-workers.js';
import { EXIT } from './exit.js';
import { armShutdownDeadline } from './shutdown.js';
import { inlineWorkerLogFile, progressReporter } from './progress.js';
import { connectRedis, gatewayFromEnv, openQueues } from './connections.js';
import { connectDb } from './runtime.js';
import { createLog } from '../log.js';
import { closeQueue } from '../queue/queues.js';
import type { RedisConnection } from '../queue/redis.js';
import { settledWithin, withDeadline } from '../deadline.js';

export interface Session {
  env: ResolvedEnv;
  log: Log;
  db: DbHandle;
  redis: RedisConnection;
  queues: ReturnType<typeof openQueues>;
  gateway: Gateway | null;
  close(): Promise<void>;
}

/** How long each step of closing a session may take before the next one goes ahead regardless. */
const CLOSE_STEP_MS = 3_000;
/** A Redis ping of the waiter that takes longer is reported as Redis not answering. */
const REDIS_PING_DEADLINE_MS = 3_000;

/** Connects everything a command needs, failing fast (5 s) with how to start what is down. */
export async function openSession(env: ResolvedEnv, options: { needGateway: boolean }): Promise<Session> {
  const gateway = options.needGateway ? gatewayFromEnv(env) : null;
  const db = await connectDb(env, { writable: options.needGateway });
  let redis: RedisConnection;
  try {
    redis = await connectRedis(env, options.needGateway ? 'worker' : 'producer');
  } catch (e) {
    await db.close();
    throw e;
  }
  const queues = openQueues(env, redis);
  return {
    env,
    log: createLog(env.logLevel),
    db,
    redis,
    queues,
    gateway,
    async close() {
      // Each step is bounded: a silent server must not keep the process from ending.
      await settledWithin(Promise.all(Object.values(queues).map(closeQueue)), CLOSE_STEP_MS);
      await settledWithin(gateway?.close() ?? Promise.resolve(), CLOSE_STEP_MS);
      redis.disconnect();
      await db.close();
    },
  };
}

/** How often workers and `--wait` look for partitions whose job Redis lost. */
export const RECONCILE_INTERVAL_MS = 30_000;
/** How soon `--wait` says that no worker takes its jobs. */
const WORKER_CHECK_MS = 5_000;

/** Workers, and the reconciler that gives them back any work Redis lost. `observer` sees every gateway call. */
export function startSessionWorkers(s: Session, observer?: CallObserver): RunningWorkers {
  const running = startWorkers(
    {
      connection: s.redis,
      prefix: s.env.queuePrefix,
      concurrency: s.env.workerConcurrency,
      windowLanes: s.env.windowLanes,
      failuresAllowed: s.env.jobAttempts,
      retryBaseDelayMs: s.env.retryBaseDelayMs,
      gatewayOutageGraceMs: s.env.gatewayOutageGraceMs,
      interruptDb: () => s.db.interrupt(),
    },
    {
      gateway: s.gateway!,
      db: s.db.db,
      log: s.log,
      knowledgeTtlMs: s.env.gatewayKnowledgeTtlMs,
      observer,
      budget: { billedCallsPerDay: s.env.billedCallsPerDay },
    },
  );
  const reconciler = startReconciler(s.db.db, s.queues, s.log, RECONCILE_INTERVAL_MS);
  // The statement fails as a lost connection and is retried; the log says why it took so long.
  const unhear = s.db.onSilence((e) => s.log.warn({ err: e.message }, 'PostgreSQL connection silent: destroyed'));
  return {
    workers: running.workers,
    async close(deadlineMs) {
      unhear();
      // A pass stuck on a silent server is abandoned (it only re-queues what lost its job), while the workers close.
      const [closed] = await Promise.all([running.close(deadlineMs), settledWithin(reconciler.stop(), CLOSE_STEP_MS)]);
      return closed;
    },
  };
}

/** Says when no worker takes the jobs of these streams, and when one is back. */
function workerWatch(s: Session, refs: PartitionRef[], note: (line: string) => void): () => Promise<void> {
  const ops = [...new Set(refs.map((r) => operationOfStreamKey(r.streamKey)).filter((op) => op !== null))];
  let absent = false;
  let checkedAt = Date.now() - WORKER_CHECK_MS / 2;
  return async () => {
    if (Date.now() - checkedAt < WORKER_CHECK_MS) return;
    checkedAt = Date.now();
    const counts = await Promise.all(ops.map((op) => s.queues[op].getWorkersCount()));
    const none = counts.some((n) => n === 0);
    if (none && !absent)
      note(
        `no worker is taking jobs on queue prefix "${s.env.queuePrefix}": ` +
          'start one (gateway-ingest worker) or re-run with --inline; still waiting',
      );
    if (!none && absent) note('a worker is taking jobs again');
    absent = none;
  };
}

/** What `--wait` says when the work is held rather than finished, and how to go on. Pure. */
export function haltMessage(halt: Halt, backfillId: string | null): string {
  const id = backfillId ?? '<id>';
  if (halt.kind === 'cancelled')
    return `cancelled: what was written stays; running the same backfill again fetches only what is missing`;
  if (halt.kind === 'paused') return `paused by user: \`gateway-ingest backfill resume ${id}\` continues it`;
  if (halt.scope === 'backfill') {
    return (
      `paused by budget: ${halt.used} of ${halt.cap} billed calls; ` +
      `raise with \`gateway-ingest backfill budget ${id} N\` (or \`backfill resume ${id} --max-billed-calls N\`)`
    );
  }
  return (
    `paused by budget: ${halt.used} of ${halt.cap} billed calls of BILLED_CALLS_PER_DAY used today; ` +
    `resumes by itself at ${toRfc3339(halt.untilMs)}, or sooner when BILLED_CALLS_PER_DAY is raised`
  );
}

/** BullMQ's events of a job that ended, whichever way. */
const JOB_ENDS = ['completed', 'failed'] as const;

/** Calls `listener` whenever one of `workers` ends a job; returns the unsubscribe. */
function onJobEnd(workers: RunningWorkers['workers'], listener: () => void): () => void {
  for (const w of workers) for (const event of JOB_ENDS) w.on(event, listener);
  return () => {
    for (const w of workers) for (const event of JOB_ENDS) w.off(event, listener);
  };
}

/**
 * `--wait` / `--inline`: waits for the partitions with progress until they are finished, or until
 * the backfill is held (paused, cancelled, at a budget) and says which; 0 only if every one is done.
 */
export async function awaitBackfill(
  s: Session,
  refs: PartitionRef[],
  inline: boolean,
  options: { backfillId?: string | null } = {},
): Promise<number> {
  const backfillId = options.backfillId ?? null;
  const logFile = inline ? inlineWorkerLogFile(process.stderr, s.env) : null;
  const workers = inline ? startSessionWorkers(logFile ? { ...s, log: logFile.log } : s) : null;
  const reporter = progressReporter(process.stderr, 'backfill');
  if (logFile) reporter.note(`worker logs: ${logFile.path}`);
  // Outside --inline the waiting process reconciles too, so that it ends whoever lost the work.
  const reconciler = inline ? null : startReconciler(s.db.db, s.queues, silentLog(), RECONCILE_INTERVAL_MS);
  const watchWorkers = inline ? null : workerWatch(s, refs, (l) => reporter.note(l));
  let reportedRequeue = 0;
  const stop = new AbortController();
  const onSignal = () => {
    // Stopped before every partition finished: the wait's own answer would be 1 too.
    armShutdownDeadline(s.env.shutdownDeadlineMs, EXIT.failed);
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let outage = false;
  let redisOutage = false;
  const dbSilent = (e: Error) => {
    // Stopped, the wait no longer waits: a poll cut off by the shutdown is no outage to report.
    if (stop.signal.aborted) return;
    if (!outage) reporter.note(`PostgreSQL does not answer (${e.message}); still waiting`);
    outage = true;
  };
  // A silent connection may be any of the pool's, the workers' as much as the poll's: each is said.
  const unhearSilence = s.db.onSilence(dbSilent);
  // Workers and queues wait on Redis without a word: the waiter says when it does not answer.
  const pingRedis = async () => {
    try {
      await withDeadline(s.redis.ping(), REDIS_PING_DEADLINE_MS, 'Redis');
      if (redisOutage) reporter.note('Redis answers again');
      redisOutage = false;
    } catch (e) {
      if (!redisOutage && !stop.signal.aborted)
        reporter.note(`Redis does not answer (${(e as Error).message}); still waiting`);
      redisOutage = true;
    }
  };
  try {
    const p = await waitForPartitions(
      s.db.db,
      refs,
      (p) => {
        if (outage) reporter.note('PostgreSQL answers again');
        outage = false;
        reporter.update(p);
      },
      {
        signal: stop.signal,
        onOutage: dbSilent,
        halt:
          backfillId === null ? undefined : () => backfillHalt(s.db.db, s.queues, backfillId, s.env.billedCallsPerDay),
        wakeups: workers ? (wake) => onJobEnd(workers.workers, wake) : undefined,
        onTick: async () => {
          await pingRedis();
          await watchWorkers?.();
          const r = await reconciler?.runOnce();
          if (r && r.requeued.length > reportedRequeue)
            reporter.note(
              `${r.requeued.length} partitions had no job that would run them (Redis lost it?): ` +
                `queued again, e.g. ${r.requeued[0]}`,
            );
          if (r) reportedRequeue = r.requeued.length;
        },
      },
    );
    reporter.stop();
    const unfinished = p.total - p.done - p.partial - p.failed;
    const partial = p.partial > 0 ? `${p.partial} partial, ` : '';
    process.stdout.write(
      `${p.halt ? 'stopped' : 'finished'}: ${p.done} done, ${partial}${p.failed} failed, ` +
        `${unfinished} unfinished of ${p.total} partitions\n`,
    );
    if (p.halt) process.stdout.write(`${haltMessage(p.halt, backfillId)}\n`);
    if (p.partial > 0)
      process.stdout.write(
        'partial windows hold intervals no query could resolve: ' +
          '`gateway-ingest status` lists them; a re-run retries only those\n',
      );
    if (p.failed > 0)
      process.stdout.write(
        'failed windows keep what they proved: `gateway-ingest status` gives each reason; the same backfill run ' +
          'again takes them up where they stopped, with a call ceiling of its own (--refresh reads them afresh)\n',
      );
    return p.done === p.total ? EXIT.ok : EXIT.failed;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    unhearSilence();
    await Promise.all([
      settledWithin(reconciler?.stop() ?? Promise.resolve(), CLOSE_STEP_MS),
      workers?.close(s.env.shutdownDeadlineMs),
    ]);
    logFile?.close();
  }
}
