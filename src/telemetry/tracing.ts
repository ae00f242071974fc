/**
 * The spans the product makes itself, on `@opentelemetry/api` alone: without an SDK registered (the
 * default, see telemetry/start.ts) every call here is a no-op, so callers use it unconditionally.
 *
 * No attribute may ever hold MARKET_KEY: the key travels in a request header, which nothing here
 * reads, and the gateway's URL holds no key (gateway/client.ts).
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Span, type SpanOptions } from '@opentelemetry/api';
import type { Operation } from '../domain/spec.js';
import type { AttemptRecord } from '../gateway/attempt.js';

export const TRACER_NAME = 'gateway-ingest';
const tracer = trace.getTracer(TRACER_NAME);

export const ATTR = {
  operation: 'gateway.operation',
  purpose: 'gateway.purpose',
  outcome: 'gateway.outcome',
  billed: 'gateway.billed',
  units: 'gateway.units',
  errorKind: 'gateway.error_kind',
  attemptId: 'gateway.attempt_id',
  executionId: 'gateway.execution_id',
  httpStatus: 'http.response.status_code',
  errorType: 'error.type',
  streamKey: 'ingest.stream_key',
  partitionKey: 'ingest.partition_key',
  backfillId: 'ingest.backfill_id',
  refresh: 'ingest.refresh',
  planned: 'ingest.partitions_planned',
  added: 'ingest.jobs_added',
  alreadyQueued: 'ingest.jobs_already_queued',
} as const;

/** Runs `fn` in a span of its own, made the active one, ended however `fn` ends. */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : 'error' });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** Adds to the span in force (a job's, while its processor runs); nothing without one. */
export function annotateActiveSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * What the audit row says of an attempt, on its span. `billed` only once an answer came: without one
 * the gateway may or may not have billed it (the audit keeps it unknown too).
 */
export function attemptAttributes(record: AttemptRecord): Attributes {
  const attributes: Attributes = {};
  if (record.httpStatus !== null) {
    attributes[ATTR.httpStatus] = record.httpStatus;
    attributes[ATTR.billed] = record.billed;
  }
  if (record.outcome !== null) attributes[ATTR.outcome] = record.outcome;
  if (record.units !== null) attributes[ATTR.units] = record.units;
  if (record.executionId !== null) attributes[ATTR.executionId] = record.executionId;
  if (record.errorKind !== null) {
    attributes[ATTR.errorKind] = record.errorKind;
    attributes[ATTR.errorType] = record.errorKind;
  }
  return attributes;
}

/**
 * One gateway call, `gateway earthquake_query` or `gateway indicator_query`: the HTTP attempt only
 * (the audit writes around it are spans of their own under the job). A failed attempt is an error.
 */
export function traceGatewayCall<A extends { ok: boolean; record: AttemptRecord }>(
  operation: Operation,
  call: { purpose: string; attemptId: number; streamKey: string; partitionKey: string },
  send: () => Promise<A>,
): Promise<A> {
  const attributes: Attributes = {
    [ATTR.operation]: operation,
    [ATTR.purpose]: call.purpose,
    [ATTR.attemptId]: call.attemptId,
    [ATTR.streamKey]: call.streamKey,
    [ATTR.partitionKey]: call.partitionKey,
  };
  return inSpan(`gateway ${operation}_query`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const attempt = await send();
    span.setAttributes(attemptAttributes(attempt.record));
    if (!attempt.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.record.errorKind ?? 'no result' });
    return attempt;
  });
}
