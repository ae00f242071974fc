/**
 * Prometheus metrics of one service instance. A registry of its own (not prom-client's global one)
 * so that several instances, as in tests, never register the same metric twice.
 */
import type { Job, Queue, Worker } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { CallObserver } from '../worker/deps.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed', 'paused'] as const;
/** A scrape must answer even while Redis is away: depth is then simply left out. */
const DEPTH_TIMEOUT_MS = 2_000;

export interface ServiceMetrics {
  registry: Registry;
  observer: CallObserver;
  /** Times every job the workers finish or fail, by queue. */
  watchWorkers(workers: readonly Worker[]): void;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function callMetrics(registry: Registry): CallObserver {
  const registers = [registry];
  const calls = new Counter({ name: 'gateway_calls_total', help: 'Gateway calls by operation and error kind ("none" on success)', labelNames: ['operation', 'error_kind'], registers });
  const billed = new Counter({ name: 'gateway_billed_calls_total', help: 'Billed gateway calls (outcome succeeded)', labelNames: ['operation'], registers });
  const units = new Counter({ name: 'gateway_units_total', help: 'Units billed by the gateway (events or points)', labelNames: ['operation'], registers });
  const rows = new Counter({ name: 'rows_upserted_total', help: 'Rows inserted or revised in PostgreSQL', labelNames: ['operation'], registers });
  return {
    onCall(record: AttemptRecord, rowsWritten: number) {
      const operation = record.operation;
      calls.inc({ operation, error_kind: record.errorKind ?? 'none' });
      if (record.billed) {
        billed.inc({ operation });
        units.inc({ operation }, record.units ?? 0);
      }
      if (rowsWritten > 0) rows.inc({ operation }, rowsWritten);
    },
  };
}

function queueDepth(registry: Registry, queues: readonly Queue[]): void {
  new Gauge({
    name: 'queue_depth',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        queues.map(async (q) => {
          const counts = await withTimeout(q.getJobCounts(...JOB_STATES), DEPTH_TIMEOUT_MS).catch(() => null);
          for (const state of JOB_STATES) if (counts) this.set({ queue: q.name, state }, counts[state] ?? 0);
        }),
      );
    },
  });
}

function jobDurations(registry: Registry): (workers: readonly Worker[]) => void {
  const histogram = new Histogram({
    name: 'job_duration_seconds',
    help: 'Time from a job attempt starting to it completing or failing',
    labelNames: ['queue', 'status'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const observe = (queue: string, status: string, job: Job | undefined) => {
    if (job?.processedOn === undefined) return;
    histogram.observe({ queue, status }, Math.max(0, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000));
  };
  return (workers) => {
    for (const w of workers) {
      w.on('completed', (job) => observe(w.name, 'completed', job));
      w.on('failed', (job) => observe(w.name, 'failed', job));
    }
  };
}

export function createServiceMetrics(queues: readonly Queue[]): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const observer = callMetrics(registry);
  queueDepth(registry, queues);
  return { registry, observer, watchWorkers: jobDurations(registry) };
}
