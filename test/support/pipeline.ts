import { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { UndiciGateway } from '../../src/gateway/client.js';
import { waitForPartitions, type PartitionRef, type WaitProgress } from '../../src/ingest/wait.js';
import { silentLog } from '../../src/log.js';
import { closeQueue, openQueue } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../src/worker/run-workers.js';
import type { RunningEmulator } from '@gateway-ingest/emulator';
import type { TestDatabase } from './isolation.js';
import { redisUrl, uniquePrefix } from './isolation.js';

export interface Pipeline {
  queues: { earthquake: Queue; indicator: Queue };
  gateway: UndiciGateway;
  workers: RunningWorkers;
  run(refs: PartitionRef[]): Promise<Pick<WaitProgress, 'total' | 'done' | 'partial' | 'failed'>>;
  close(): Promise<void>;
}

/** The real pipeline (queues, workers, gateway client) against a test database and an emulator. */
export function startPipeline(
  db: TestDatabase,
  emulator: RunningEmulator,
  key: string,
  options: {
    attempts?: number;
    /** GATEWAY_OUTAGE_GRACE_MS (0 by default: a partition fails at its `attempts`-th failure in a row). */
    gatewayOutageGraceMs?: number;
    knowledgeTtlMs?: number;
    /** GATEWAY_TIMEOUT_MS (10 s by default). */
    gatewayTimeoutMs?: number;
    concurrency?: number;
    windowLanes?: number;
    billedCallsPerDay?: number | null;
    budgetRecheckMs?: number;
    prefix?: string;
    /** A Redis of the test's own (the shared one by default). */
    redisUrl?: string;
  } = {},
): Pipeline {
  const connection = new Redis(options.redisUrl ?? redisUrl(), { maxRetriesPerRequest: null });
  // A second pipeline given the first one's prefix is a second worker process on the same queues.
  const prefix = options.prefix ?? uniquePrefix();
  const settings = { connection, prefix };
  const queues = { earthquake: openQueue('earthquake', settings), indicator: openQueue('indicator', settings) };
  const gateway = new UndiciGateway({
    baseUrl: emulator.url,
    key,
    authHeader: 'authorization',
    timeoutMs: options.gatewayTimeoutMs ?? 10_000,
  });
  const workers = startWorkers(
    {
      connection,
      prefix,
      concurrency: options.concurrency ?? 2,
      windowLanes: options.windowLanes ?? 1,
      failuresAllowed: options.attempts ?? 8,
      retryBaseDelayMs: 20,
      gatewayOutageGraceMs: options.gatewayOutageGraceMs ?? 0,
      budgetRecheckMs: options.budgetRecheckMs,
    },
    {
      gateway,
      db: db.db,
      log: silentLog(),
      knowledgeTtlMs: options.knowledgeTtlMs ?? 3_600_000,
      budget: { billedCallsPerDay: options.billedCallsPerDay ?? null },
    },
  );
  return {
    queues,
    gateway,
    workers,
    // The partition counts only: tests compare them whole.
    run: async (refs) => {
      const p = await waitForPartitions(db.db, refs, () => undefined, { pollMs: 100 });
      return { total: p.total, done: p.done, partial: p.partial, failed: p.failed };
    },
    async close() {
      await workers.close(5_000);
      await Promise.all(Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => closeQueue(q))));
      await gateway.close();
      connection.disconnect();
    },
  };
}
