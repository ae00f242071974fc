import { context, INVALID_SPAN_CONTEXT, isSpanContextValid, trace, type Context } from '@opentelemetry/api';
import {
  Queue,
  SpanKind as QueueSpanKind,
  type ConnectionOptions,
  type JobsOptions,
  type Telemetry as QueueTelemetry,
} from 'bullmq';
import { BullMQOtel, BullMQOTelSpan } from 'bullmq-otel';
import { type Operation } from '../domain/spec.js';

/** The tracer BullMQ's spans come from (job enqueued, job processed), told apart from ours by it. */
const BULLMQ_TRACER_NAME = 'bullmq';

/**
 * BullMQ's telemetry option (bullmq-otel), on every Queue and Worker: adding jobs carries the active
 * trace context in each job, and processing one continues that trace, so a job's span sits under
 * its enqueue.
 *
 * Less BullMQ's housekeeping, which it traces as spans with no parent: a blocking wait that found no
 * job (every few seconds per queue, however idle), and the stalled-job checker, whose checks every
 * 5 s all descend from one span opened at start, a trace that would grow for as long as the worker
 * runs. Those spans, and so their children, record nothing; BullMQ's spans with a parent (adding
 * jobs under an enqueue, processing a job) are its own.
 */
export function queueTelemetry(): QueueTelemetry<Context> {
  const otel = new BullMQOtel(BULLMQ_TRACER_NAME);
  return {
    contextManager: otel.contextManager,
    tracer: {
      startSpan(name, options, parentContext) {
        const parent = trace.getSpanContext(parentContext ?? context.active());
        const housekeeping = options?.kind === QueueSpanKind.INTERNAL && (!parent || !isSpanContextValid(parent));
        if (housekeeping) return new BullMQOTelSpan(trace.wrapSpanContext(INVALID_SPAN_CONTEXT));
        return otel.tracer.startSpan(name, options, parentContext);
      },
    },
  };
}

export const QUEUE_NAMES = {
  earthquake: 'earthquake-windows',
  indicator: 'indicator-chunks',
} as const satisfies Record<Operation, string>;

export interface QueueSettings {
  connection: ConnectionOptions;
  prefix: string;
}

/**
 * Retries are decided by the worker (failures in a row per partition, see worker/run-workers.ts),
 * which puts a job back as delayed rather than failing it; BullMQ's own attempts only count jobs
 * put back at shutdown or while Redis was away, which must never fail a window.
 * Retention is bounded: BullMQ keeps finished jobs in Redis until told otherwise.
 */
export const QUEUE_JOB_OPTIONS: JobsOptions = {
  attempts: 1_000_000,
  // Only jobs put back at shutdown or while Redis was away come this way: a short fixed wait.
  backoff: { type: 'fixed', delay: 1_000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
  removeOnFail: { age: 30 * 24 * 3600, count: 10_000 },
};

export function openQueue(operation: Operation, s: QueueSettings): Queue {
  return new Queue(QUEUE_NAMES[operation], {
    connection: s.connection,
    prefix: s.prefix,
    defaultJobOptions: QUEUE_JOB_OPTIONS,
    telemetry: queueTelemetry(),
  });
}

/**
 * Closes a queue on a shared connection. BullMQ asks the server's version as soon as a queue is made
 * and, closing it before the answer, drops its error listeners: the connection closed next fails that
 * question with no one to hear it, an unhandled rejection that ends a short command (`status`,
 * `backfill list`) with a crash. Waiting for the first answer first closes it cleanly.
 */
export async function closeQueue(queue: Queue): Promise<void> {
  await queue.waitUntilReady().catch(() => undefined);
  await queue.close();
}
