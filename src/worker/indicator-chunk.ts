import type { CallContext } from '../db/audit.js';
import { recordIndicatorAnswer } from '../db/indicator-values.js';
import { isDone, loadPartition } from '../db/partitions.js';
import { type IndicatorRequest } from '../gateway/schemas.js';
import type { IndicatorChunkJob } from '../planning/work.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { failedAttempt, makeCall } from './call.js';
import { durable } from './durable.js';
import { INDICATOR_PROVIDER } from '../domain/spec.js';
import { afterAnswer, progressOf, startingRuns, type YearRun } from '../planning/indicator-years.js';

/** Pure: the gateway request for years `run` of a chunk (the whole chunk, or a run an answer left out). */
export function indicatorRequest(job: IndicatorChunkJob, run: YearRun = job): IndicatorRequest {
  return {
    provider: INDICATOR_PROVIDER,
    country: job.country,
    indicator: job.indicator,
    start_year: run.startYear,
    end_year: run.endYear,
  };
}

/**
 * Reads a chunk: its years asked, then each run of them an answer left out, on its own, until every
 * year is held or proven empty (planning/indicator-years.ts). Progress is saved with each answer, so
 * a job cut off resumes with the runs it had left.
 */
export async function processIndicatorChunk(
  job: IndicatorChunkJob,
  ctx: JobContext,
  deps: ProcessorDeps,
): Promise<{ rowsWritten: number; skipped: boolean }> {
  const partition = await loadPartition(deps.db, job);
  if (isDone(partition)) return { rowsWritten: 0, skipped: true };
  const call: CallContext = {
    streamKey: job.streamKey,
    partitionKey: job.partitionKey,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
    purpose: 'fetch',
    backfillId: partition?.backfillId ?? null,
  };
  let pending = startingRuns(job, partition?.frontier);
  let rowsWritten = 0;
  while (pending.length > 0) {
    const asked = pending[0]!;
    const answer = await askRun(job, asked, call, ctx, deps);
    pending = afterAnswer(pending, new Set((answer.values ?? []).map((v) => v.year)));
    rowsWritten += await answer.write(progressOf(pending));
    if (pending.length > 0)
      deps.log.info({ stream: job.streamKey, asked, left: pending }, 'indicator answer left years out: asked again');
  }
  return { rowsWritten, skipped: false };
}

/** One call for `asked`; its answer, written with the progress given once the caller knows what is left. */
async function askRun(job: IndicatorChunkJob, asked: YearRun, call: CallContext, ctx: JobContext, deps: ProcessorDeps) {
  const { db, gateway, log } = deps;
  const fields = {
    operation: 'indicator',
    stream: job.streamKey,
    years: `${asked.startYear}-${asked.endYear}`,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
  };
  const request = indicatorRequest(job, asked);
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
  const { result, record } = attempt;
  const write = async (left: object | null) => {
    const written = await durable(
      () => recordIndicatorAnswer(db, attemptId, record, call, result, job, asked, left),
      ctx,
      log,
    );
    deps.observer?.onCall(record, written.rowsWritten);
    log.info(
      {
        ...fields,
        outcome: record.outcome,
        units: record.units,
        countryId: result.country.id,
        values: result.values?.length ?? 0,
        rowsWritten: written.rowsWritten,
        durationMs: record.durationMs,
      },
      'gateway call',
    );
    return written.rowsWritten;
  };
  return { values: result.values, write };
}
