/**
 * Prometheus metrics of one service instance. A registry of its own (not prom-client's global one)
 * so that several instances, as in tests, never register the same metric twice. Every name but
 * the default process metrics starts with `gateway_ingest_`.
 */
import type { Job, Queue, Worker } from 'bullmq';
import { withDeadline } from '../deadline.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../db/connection.js';
import { streamNewestData, type StreamFreshness } from '../db/queries/freshness.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { CallObserver } from '../worker/deps.js';
import { dayBudgetUsed, utcDay } from './dashboard/queries.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed', 'paused'] as const;
/** A scrape must answer even while Redis or PostgreSQL is away: those gauges are then left out. */
const SCRAPE_QUERY_TIMEOUT_MS = 2_000;
const PREFIX = 'gateway_ingest_';

export interface MetricSources {
  queues: readonly Queue[];
  /** Read at scrape time for freshness and the budget; without it those gauges are absent. */
  db?: Db;
  /** BILLED_CALLS_PER_DAY; null or absent: no budget gauge. */
  billedCallsPerDay?: number | null;
}

export interface ServiceMetrics {
  registry: Registry;
  observer: CallObserver;
  /** Times every job the workers finish or fail, by queue. */
  watchWorkers(workers: readonly Worker[]): void;
}

/** Up to GATEWAY_TIMEOUT_MS (30 s by default) and a little beyond. */
function callLatency(registry: Registry): Histogram<'operation' | 'error_kind'> {
  return new Histogram({
    name: `${PREFIX}gateway_call_duration_seconds`,
    help: 'Duration of one gateway call (one HTTP attempt), by operation and error kind ("none" on success)',
    labelNames: ['operation', 'error_kind'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
    registers: [registry],
  });
}

function callMetrics(registry: Registry): CallObserver {
  const registers = [registry];
  const calls = new Counter({
    name: `${PREFIX}gateway_calls_total`,
    help: 'Gateway calls by operation and error kind ("none" on success)',
    labelNames: ['operation', 'error_kind'],
    registers,
  });
  const billed = new Counter({
    name: `${PREFIX}gateway_billed_calls_total`,
    help: 'Billed gateway calls (outcome succeeded)',
    labelNames: ['operation'],
    registers,
  });
  const units = new Counter({
    name: `${PREFIX}gateway_units_total`,
    help: 'Units billed by the gateway (events or points)',
    labelNames: ['operation'],
    registers,
  });
  const rows = new Counter({
    name: `${PREFIX}rows_upserted_total`,
    help: 'Rows inserted or revised in PostgreSQL',
    labelNames: ['operation'],
    registers,
  });
  const latency = callLatency(registry);
  const probes = new Counter({
    name: `${PREFIX}gateway_liveness_probes_total`,
    help: 'Liveness probes after timeouts and before queries while the gateway is silent, by operation and whether it answered ("false": not answering at all)',
    labelNames: ['operation', 'answered'],
    registers,
  });
  return {
    onLivenessProbe(record: AttemptRecord) {
      probes.inc({ operation: record.operation, answered: String(record.httpStatus !== null) });
    },
    onCall(record: AttemptRecord, rowsWritten: number) {
      const operation = record.operation;
      const labels = { operation, error_kind: record.errorKind ?? 'none' };
      calls.inc(labels);
      latency.observe(labels, Math.max(0, record.durationMs) / 1000);
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
    name: `${PREFIX}queue_depth`,
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        queues.map(async (q) => {
          const counts = await withDeadline(
            q.getJobCounts(...JOB_STATES),
            SCRAPE_QUERY_TIMEOUT_MS,
            'metrics scrape',
          ).catch(() => null);
          for (const state of JOB_STATES) if (counts) this.set({ queue: q.name, state }, counts[state] ?? 0);
        }),
      );
    },
  });
}

function jobDurations(registry: Registry): (workers: readonly Worker[]) => void {
  const histogram = new Histogram({
    name: `${PREFIX}job_duration_seconds`,
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

/** When a stream's newest data is: its newest event, or the end of the last year holding a value. */
export function newestDataMs(f: Pick<StreamFreshness, 'newestEventTime' | 'lastValueYear'>): number | null {
  if (f.newestEventTime !== null) return f.newestEventTime.getTime();
  return f.lastValueYear === null ? null : Date.UTC(f.lastValueYear + 1, 0, 1);
}

function freshnessGauge(registry: Registry, db: Db): void {
  new Gauge({
    name: `${PREFIX}stream_freshness_seconds`,
    help:
      'Seconds since the newest data of each stream (by stream key): its newest event, ' +
      'or for an indicator series the end of the last year holding a value',
    labelNames: ['stream'],
    registers: [registry],
    async collect() {
      this.reset();
      const streams = await withDeadline(streamNewestData(db), SCRAPE_QUERY_TIMEOUT_MS, 'metrics scrape').catch(
        () => null,
      );
      const now = Date.now();
      for (const [stream, f] of streams ?? []) {
        const newest = newestDataMs(f);
        if (newest !== null) this.set({ stream }, Math.max(0, (now - newest) / 1000));
      }
    },
  });
}

/** Registered only with a cap: no series means no budget, rather than a made-up number. */
function budgetGauge(registry: Registry, db: Db, cap: number): void {
  new Gauge({
    name: `${PREFIX}budget_billed_calls_left`,
    help:
      'Billed calls left in a budget; scope "day": ' +
      'BILLED_CALLS_PER_DAY minus the calls counted on the current UTC day',
    labelNames: ['scope'],
    registers: [registry],
    async collect() {
      this.reset();
      const used = await withDeadline(
        dayBudgetUsed(db, utcDay(Date.now())),
        SCRAPE_QUERY_TIMEOUT_MS,
        'metrics scrape',
      ).catch(() => null);
      if (used !== null) this.set({ scope: 'day' }, cap - used);
    },
  });
}

export function createServiceMetrics(s: MetricSources): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const observer = callMetrics(registry);
  queueDepth(registry, s.queues);
  if (s.db) freshnessGauge(registry, s.db);
  const cap = s.billedCallsPerDay ?? null;
  if (s.db && cap !== null) budgetGauge(registry, s.db, cap);
  return { registry, observer, watchWorkers: jobDurations(registry) };
}
