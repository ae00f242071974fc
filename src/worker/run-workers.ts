import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { z } from 'zod';
import { markPartitionFailed } from '../db/writes/partitions.js';
import { GatewayError } from '../gateway/errors.js';
import type { Operation } from '../gateway/schemas.js';
import { earthquakeWindowJobSchema, indicatorChunkJobSchema } from '../queue/payloads.js';
import { BACKOFF_TYPE, QUEUE_NAMES, retryDelayMs } from '../queue/queues.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { processEarthquakeWindow } from './earthquake-window.js';
import { processIndicatorChunk } from './indicator-chunk.js';

export interface WorkerSettings {
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  retryBaseDelayMs: number;
  operations?: Operation[];
}

export interface RunningWorkers {
  workers: Worker[];
  /** Stops taking jobs, lets in-flight ones finish within `deadlineMs`, then cuts them off. */
  close(deadlineMs: number): Promise<{ cutOff: boolean }>;
}

type Processor<T> = (data: T, ctx: JobContext, deps: ProcessorDeps) => Promise<unknown>;

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function wrap<T extends { streamKey: string; partitionKey: string }>(
  schema: z.ZodType<T>,
  process: Processor<T>,
  deps: ProcessorDeps,
  inFlight: Set<AbortController>,
) {
  return async (job: Job): Promise<unknown> => {
    const parsed = schema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid job payload: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const controller = new AbortController();
    inFlight.add(controller);
    const ctx: JobContext = { jobId: job.id ?? null, attempt: job.attemptsMade + 1, signal: controller.signal };
    try {
      return await process(parsed.data, ctx, deps);
    } catch (e) {
      const unrecoverable = e instanceof GatewayError && !e.retryable;
      const lastAttempt = ctx.attempt >= (job.opts.attempts ?? 1);
      if (controller.signal.aborted) throw e; // cut off by shutdown: retried later, not failed
      if (unrecoverable || lastAttempt) {
        await markPartitionFailed(deps.db, parsed.data.streamKey, parsed.data.partitionKey, describe(e), e instanceof GatewayError ? e.kind : 'internal').catch(
          (dbError: unknown) => deps.log.error({ err: dbError }, 'could not mark partition failed'),
        );
      }
      if (unrecoverable) {
        const fatal = new UnrecoverableError(describe(e));
        fatal.cause = e;
        throw fatal;
      }
      throw e;
    } finally {
      inFlight.delete(controller);
    }
  };
}

export function startWorkers(settings: WorkerSettings, deps: ProcessorDeps): RunningWorkers {
  const inFlight = new Set<AbortController>();
  const processors = {
    earthquake: wrap(earthquakeWindowJobSchema, processEarthquakeWindow, deps, inFlight),
    indicator: wrap(indicatorChunkJobSchema, processIndicatorChunk, deps, inFlight),
  } satisfies Record<Operation, unknown>;
  const operations = settings.operations ?? (['earthquake', 'indicator'] as const);
  const workers = operations.map((op) => {
    const worker = new Worker(QUEUE_NAMES[op], processors[op], {
      connection: settings.connection,
      prefix: settings.prefix,
      concurrency: settings.concurrency,
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string, err?: Error) =>
          type === BACKOFF_TYPE || type === undefined
            ? retryDelayMs(attemptsMade, settings.retryBaseDelayMs, err instanceof GatewayError ? err.retryAfterMs : null)
            : settings.retryBaseDelayMs,
      },
    });
    worker.on('error', (err) => deps.log.error({ err, queue: op }, 'worker error'));
    worker.on('failed', (job, err) =>
      deps.log.warn({ jobId: job?.id, queue: op, attempt: job?.attemptsMade, err: err.message }, 'job attempt failed'),
    );
    return worker;
  });
  return {
    workers,
    async close(deadlineMs) {
      const graceful = Promise.all(workers.map((w) => w.close())).then(() => false);
      const deadline = new Promise<boolean>((resolve) => setTimeout(() => resolve(true), deadlineMs).unref());
      const cutOff = await Promise.race([graceful, deadline]);
      if (cutOff) {
        for (const c of inFlight) c.abort(new Error('shutdown deadline reached'));
        await Promise.all(workers.map((w) => w.close(true)));
      }
      return { cutOff };
    },
  };
}
