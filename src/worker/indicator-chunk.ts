import type { CallContext } from '../db/writes/audit.js';
import { recordIndicatorAnswer } from '../db/writes/indicator-answer.js';
import { loadPartition } from '../db/writes/partitions.js';
import { INDICATOR_PROVIDER, type IndicatorRequest } from '../gateway/schemas.js';
import type { IndicatorChunkJob } from '../queue/payloads.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { failedAttempt } from './failed-attempt.js';

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

export async function processIndicatorChunk(job: IndicatorChunkJob, ctx: JobContext, deps: ProcessorDeps): Promise<{ rowsWritten: number; skipped: boolean }> {
  const { db, gateway, log } = deps;
  const partition = await loadPartition(db, job.streamKey, job.partitionKey);
  if (partition?.state === 'done') return { rowsWritten: 0, skipped: true };
  const call: CallContext = { streamKey: job.streamKey, partitionKey: job.partitionKey, jobId: ctx.jobId, attempt: ctx.attempt, purpose: 'fetch' };
  const fields = { operation: 'indicator', stream: job.streamKey, years: `${job.startYear}-${job.endYear}`, jobId: ctx.jobId, attempt: ctx.attempt };
  const attempt = await gateway.queryIndicator(indicatorRequest(job), ctx.signal);
  if (!attempt.ok) throw await failedAttempt(deps, attempt.record, attempt.cause, call, fields);
  const written = await recordIndicatorAnswer(db, attempt.record, call, attempt.result, job);
  deps.observer?.onCall(attempt.record, written.rowsWritten);
  log.info(
    { ...fields, outcome: attempt.record.outcome, units: attempt.record.units, countryId: attempt.result.country.id, values: attempt.result.values?.length ?? 0, rowsWritten: written.rowsWritten, durationMs: attempt.record.durationMs },
    'gateway call',
  );
  return { rowsWritten: written.rowsWritten, skipped: false };
}
