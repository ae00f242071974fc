import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningEmulator } from '@gateway-ingest/emulator';
import type { EnqueueSummary } from '../../src/ingest/enqueue-backfill.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { startSdk, type Telemetry } from '../../src/telemetry/sdk.js';
import type { TestDatabase } from '../support/isolation.js';
import type { Pipeline } from '../support/pipeline.js';

/** Distinctive enough that any occurrence is the key, never a coincidence. */
const KEY = 'tracecheck-Qm8R-5e6f7a8b-secret';
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
/** One day of the month: one window, a few hundred events, a handful of calls. */
const FROM = Date.parse('2025-05-10T00:00:00Z');
const TO = Date.parse('2025-05-11T00:00:00Z');
const NOW = () => new Date('2025-07-01T00:00:00Z');

const exporter = new InMemorySpanExporter();
let telemetry: Telemetry;
let db: TestDatabase;
let emulator: RunningEmulator;
let pipeline: Pipeline;
let summary: EnqueueSummary;
let progress: Awaited<ReturnType<Pipeline['run']>>;

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const isJob = (s: ReadableSpan) => s.name === 'process earthquake-windows' && s.kind === SpanKind.CONSUMER;

/** The span and every span above it, nearest first. */
function lineage(span: ReadableSpan): ReadableSpan[] {
  const byId = new Map(spans().map((s) => [s.spanContext().spanId, s]));
  const chain: ReadableSpan[] = [];
  for (let s: ReadableSpan | undefined = span; s; s = byId.get(s.parentSpanContext?.spanId ?? '')) chain.push(s);
  return chain;
}

const under = (span: ReadableSpan, ancestor: ReadableSpan) => lineage(span).slice(1).includes(ancestor);
const parentOf = (span: ReadableSpan) => lineage(span)[1];

beforeAll(async () => {
  // Before anything imports pg: the instrumentation patches it as it is first required. Every module
  // that reaches pg is imported below, once the SDK has started, as the CLI entry does.
  telemetry = startSdk({ serviceName: 'gateway-ingest-test', processors: [new SimpleSpanProcessor(exporter)] });
  const { createTestDatabase } = await import('../support/isolation.js');
  const { startPipeline } = await import('../support/pipeline.js');
  const { startEmulator } = await import('@gateway-ingest/emulator');
  const { enqueueEarthquakeBackfill } = await import('../../src/ingest/enqueue-backfill.js');
  db = await createTestDatabase();
  emulator = await startEmulator({ key: KEY, earthquakeFiles: [MONTH], indicatorFiles: [], seed: 3, now: NOW });
  pipeline = startPipeline(db, emulator, KEY);
  summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
    filters: { minMagnitude: null, circle: null },
    fromMs: FROM,
    toMs: TO,
    refresh: false,
  });
  progress = await pipeline.run([summary]);
  // The job's span ends once BullMQ has recorded the job complete, a moment after its partition is done.
  await vi.waitFor(
    () => {
      if (!spans().some(isJob)) throw new Error('no finished job span yet');
    },
    { timeout: 15_000, interval: 50 },
  );
});

afterAll(async () => {
  await pipeline?.close();
  await emulator?.close();
  await db?.drop();
  await telemetry?.shutdown();
});

describe('traces of one earthquake window', () => {
  it('ran the window', () => {
    expect(summary.planned).toBe(1);
    expect(progress).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
  });

  it('puts the job under its enqueue, in one trace', () => {
    const enqueues = spans().filter((s) => s.name === 'backfill enqueue');
    expect(enqueues).toHaveLength(1);
    const enqueue = enqueues[0]!;
    expect(enqueue.parentSpanContext).toBeUndefined();
    expect(enqueue.attributes).toMatchObject({
      'gateway.operation': 'earthquake',
      'ingest.stream_key': summary.streamKey,
      'ingest.partitions_planned': 1,
      'ingest.jobs_added': 1,
    });
    const jobs = spans().filter(isJob);
    expect(jobs.length).toBeGreaterThanOrEqual(1);
    for (const job of jobs) {
      expect(under(job, enqueue)).toBe(true);
      expect(job.spanContext().traceId).toBe(enqueue.spanContext().traceId);
      expect(job.attributes['ingest.partition_key']).toBe(summary.partitionKeys[0]);
    }
    // The enqueue's own statements (the planned partition) are its children.
    expect(spans().some((s) => s.name.startsWith('pg.query') && parentOf(s) === enqueue)).toBe(true);
  });

  it('puts every gateway call under the job, one span per call, with what the audit says of it', () => {
    const jobs = spans().filter(isJob);
    const calls = spans().filter((s) => s.name === 'gateway earthquake_query');
    expect(calls).toHaveLength(emulator.calls.length);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const call of calls) {
      expect(jobs.some((job) => under(call, job))).toBe(true);
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(call.attributes).toMatchObject({
        'gateway.operation': 'earthquake',
        'gateway.outcome': 'succeeded',
        'gateway.billed': true,
        'http.response.status_code': 200,
        'ingest.partition_key': summary.partitionKeys[0],
      });
      expect(typeof call.attributes['gateway.purpose']).toBe('string');
      expect(typeof call.attributes['gateway.units']).toBe('number');
      expect(typeof call.attributes['gateway.attempt_id']).toBe('number');
      // The HTTP request itself, by the undici instrumentation, beneath the call.
      expect(spans().some((s) => s.kind === SpanKind.CLIENT && s.name === 'POST' && parentOf(s) === call)).toBe(true);
    }
    const units = calls.reduce((n, c) => n + Number(c.attributes['gateway.units']), 0);
    expect(units).toBe(emulator.calls.reduce((n, c) => n + c.units, 0));
  });

  it('puts the PostgreSQL statements of the job under it, the events written among them', () => {
    const jobs = spans().filter(isJob);
    const statements = spans().filter((s) => s.name.startsWith('pg.query') && jobs.some((job) => under(s, job)));
    expect(statements.length).toBeGreaterThan(5);
    const text = (s: ReadableSpan) => String(s.attributes['db.query.text'] ?? s.attributes['db.statement'] ?? '');
    expect(statements.some((s) => /insert into "?earthquake_events"?/i.test(text(s)))).toBe(true);
    expect(statements.every((s) => s.attributes['db.system.name'] === 'postgresql')).toBe(true);
  });

  it('holds MARKET_KEY in no span name, attribute, event or status', () => {
    expect(spans().length).toBeGreaterThan(20);
    const leaks = spans().filter((s) =>
      JSON.stringify({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
        links: s.links,
        resource: s.resource.attributes,
      }).includes(KEY),
    );
    expect(leaks.map((s) => s.name)).toEqual([]);
  });
});
