import type { CallContext } from '../db/audit.js';
import { recordIndicatorAnswer } from '../db/indicator-values.js';
import { isDone, loadPartition } from '../db/partitions.js';
import { type IndicatorRequest } from '../gateway/schemas.js';
import type { IndicatorChunkJob } from '../planning/work.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { failedAttempt, makeCall, unlessSilent } from './call.js';
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
    const step = await readRun(job, pending, call, ctx, deps);
    rowsWritten += step.rowsWritten;
    if (step.left.length > 0)
      deps.log.info(
        { stream: job.streamKey, asked: pending[0], left: step.left },
        'indicator answer left years out: asked again',
      );
    pending = step.left;
  }
  return { rowsWritten, skipped: false };
}

/** One call for the first of `pending`; its answer written with the runs it leaves, which are returned. */
async function readRun(
  job: IndicatorChunkJob,
  pending: readonly YearRun[],
  call: CallContext,
  ctx: JobContext,
  deps: ProcessorDeps,
): Promise<{ left: YearRun[]; rowsWritten: number }> {
  const { db, gateway, log } = deps;
  const asked = pending[0]!;
  const fields = {
    operation: 'indicator',
    stream: job.streamKey,
    years: `${asked.startYear}-${asked.endYear}`,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
  };
  const request = indicatorRequest(job, asked);
  await unlessSilent(deps, call, 'indicator', ctx);
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
  const left = afterAnswer(pending, new Set((result.values ?? []).map((v) => v.year)));
  const written = await durable(
    () => recordIndicatorAnswer(db, attemptId, record, call, result, job, asked, progressOf(left)),
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
  return { left, rowsWritten: written.rowsWritten };
}
