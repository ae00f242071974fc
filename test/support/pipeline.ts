import { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { UndiciGateway } from '../../src/gateway/client.js';
import { waitForPartitions, type PartitionRef, type WaitProgress } from '../../src/ingest/wait.js';
import { silentLog } from '../../src/log.js';
import { openQueue } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../src/worker/run-workers.js';
import { TruncationMemory } from '../../src/worker/truncation-memory.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import type { TestDatabase } from './isolation.js';
import { redisUrl, uniquePrefix } from './isolation.js';

export interface Pipeline {
  queues: { earthquake: Queue; indicator: Queue };
  gateway: UndiciGateway;
  workers: RunningWorkers;
  truncation: TruncationMemory;
  run(refs: PartitionRef[]): Promise<WaitProgress>;
  close(): Promise<void>;
}

/** The real pipeline (queues, workers, gateway client) against a test database and an emulator. */
export function startPipeline(db: TestDatabase, emulator: RunningEmulator, key: string, options: { attempts?: number } = {}): Pipeline {
  const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
  const prefix = uniquePrefix();
  const settings = { connection, prefix, attempts: options.attempts ?? 8, retryBaseDelayMs: 20 };
  const queues = { earthquake: openQueue('earthquake', settings), indicator: openQueue('indicator', settings) };
  const gateway = new UndiciGateway({ baseUrl: emulator.url, key, authHeader: 'authorization', timeoutMs: 10_000 });
  const truncation = new TruncationMemory(3_600_000);
  const workers = startWorkers(
    { connection, prefix, concurrency: 2, retryBaseDelayMs: 20 },
    { gateway, db: db.db, log: silentLog(), truncation },
  );
  return {
    queues,
    gateway,
    workers,
    truncation,
    run: (refs) => waitForPartitions(db.db, refs, () => undefined, { pollMs: 100 }),
    async close() {
      await workers.close(5_000);
      await Promise.all(Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())));
      await gateway.close();
      connection.disconnect();
    },
  };
}
