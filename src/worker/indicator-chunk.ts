import type { CallContext } from '../db/audit.js';
import { recordIndicatorAnswer } from '../db/indicator-values.js';
import { isDone, loadPartition } from '../db/partitions.js';
import { type IndicatorRequest } from '../gateway/schemas.js';
import type { IndicatorChunkJob } from '../planning/work.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { failedAttempt, makeCall } from './call.js';
import { durable } from './durable.js';
import { INDICATOR_PROVIDER } from '../domain/spec.js';

/** Pure: the gateway request for one chunk. */
export function indicatorRequest(job: IndicatorChunkJob): IndicatorRequest {
  return {
    provider: INDICATOR_PROVIDER,
    country: job.country,
    indicator: job.indicator,
    start_year: job.startYear,
    end_year: job.endYear,
  };
}

export async function processIndicatorChunk(
  job: IndicatorChunkJob,
  ctx: JobContext,
  deps: ProcessorDeps,
): Promise<{ rowsWritten: number; skipped: boolean }> {
  const { db, gateway, log } = deps;
  const partition = await loadPartition(db, job);
  if (isDone(partition)) return { rowsWritten: 0, skipped: true };
  const call: CallContext = {
    streamKey: job.streamKey,
    partitionKey: job.partitionKey,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
    purpose: 'fetch',
    backfillId: partition?.backfillId ?? null,
  };
  const fields = {
    operation: 'indicator',
    stream: job.streamKey,
    years: `${job.startYear}-${job.endYear}`,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
  };
  const request = indicatorRequest(job);
  // One pool of call slots for both operations: WORKER_CONCURRENCY bounds the calls in flight.
  const release = ctx.lanes ? await ctx.lanes.slots.acquire() : () => undefined;
  const { attemptId, attempt } = await makeCall(
    deps,
    call,
    'indicator',
    request,
    () => gateway.queryIndicator(request, ctx.signal),
    ctx,
  ).finally(release);
  if (!attempt.ok) throw await failedAttempt(deps, attemptId, attempt.record, attempt.cause, call, ctx, fields);
  const result = attempt.result;
  const written = await durable(
    () => recordIndicatorAnswer(db, attemptId, attempt.record, call, result, job),
    ctx,
    log,
  );
  deps.observer?.onCall(attempt.record, written.rowsWritten);
  log.info(
    {
      ...fields,
      outcome: attempt.record.outcome,
      units: attempt.record.units,
      countryId: attempt.result.country.id,
      values: attempt.result.values?.length ?? 0,
      rowsWritten: written.rowsWritten,
      durationMs: attempt.record.durationMs,
    },
    'gateway call',
  );
  return { rowsWritten: written.rowsWritten, skipped: false };
}
