/**
 * `--sample N`: pays for N earthquake calls spread over a backfill's range to measure its event
 * density when nothing stored tells it. Each call goes through the workers' call path (audit row
 * first, budgets reserved) and is recorded with purpose `sample`; later plans read those answers
 * back from the audit, so a density once paid for is never paid for again. Sampled events are not
 * stored: an answer proves nothing about coverage, and the backfill fetches them anyway.
 */
import { commitAnswer } from '../db/answers.js';
import type { CallContext } from '../db/audit.js';
import { earthquakeGatewayKey, recordAnswerSize } from '../db/gateway-knowledge.js';
import { SAMPLE_PURPOSE, sampleAnswers } from '../db/queries/plan.js';
import type { EarthquakeFilters } from '../domain/filters.js';
import type { Interval } from '../domain/interval.js';
import { LIMITS } from '../domain/spec.js';
import { BudgetExhaustedError, UsageError, retryPolicyOf } from '../errors.js';
import { earthquakeRequest } from '../planning/earthquake-request.js';
import { SampleSchedule } from '../planning/samples.js';
import { windowKey } from '../planning/windows.js';
import { failedAttempt, makeCall } from '../worker/call.js';
import type { ProcessorDeps } from '../worker/deps.js';

const CAP = LIMITS.maxResultsCeiling;

export interface SampleResult {
  calls: number;
  billedCalls: number;
  /** Calls that failed (retryable kinds): not retried, the next sample goes on. */
  failed: number;
  /** Why sampling stopped before n calls (a budget used up), or null. */
  stopped: string | null;
}

/**
 * Pays for `n` sample calls over `windows` with the stream's filters. Stops early at a budget used
 * up (what was sampled still counts); a credential or parameter error ends it as bad usage.
 */
export async function sampleDensity(
  deps: ProcessorDeps,
  streamKey: string,
  filters: EarthquakeFilters,
  windows: readonly Interval[],
  n: number,
): Promise<SampleResult> {
  const result: SampleResult = { calls: 0, billedCalls: 0, failed: 0, stopped: null };
  const schedule = new SampleSchedule(windows, n, await sampleAnswers(deps.db, streamKey));
  for (let step = schedule.next(); step !== null; step = schedule.next()) {
    const { window, interval } = step;
    // The stream's own request for the stretch: the same filters, boundaries and max_results as a window's.
    const request = earthquakeRequest(filters, { region: { lo: interval.startMs, hi: interval.endMs }, circle: null });
    // A partition key no window has, so the call is booked on no partition.
    const call: CallContext = {
      streamKey,
      partitionKey: `${SAMPLE_PURPOSE}@${windowKey(window)}`,
      jobId: null,
      attempt: 1,
      purpose: SAMPLE_PURPOSE,
    };
    const ctx = { jobId: null, attempt: 1 };
    let made;
    try {
      made = await makeCall(deps, call, 'earthquake', request, () => deps.gateway.queryEarthquakes(request), ctx);
    } catch (e) {
      if (!(e instanceof BudgetExhaustedError)) throw e;
      result.stopped = e.message;
      break;
    }
    const { attemptId, attempt } = made;
    result.calls++;
    if (!attempt.ok) {
      const error = await failedAttempt(deps, attemptId, attempt.record, attempt.cause, call, ctx, {
        operation: 'earthquake',
        stream: streamKey,
        purpose: SAMPLE_PURPOSE,
      });
      if (retryPolicyOf(error.kind) === 'never') throw new UsageError(`--sample: ${error.message}`);
      result.failed++;
      continue;
    }
    const events = attempt.result.events ?? [];
    const full = events.length >= CAP;
    await commitAnswer(deps.db, attemptId, attempt.record, call, full, async () => 0, 'answered');
    if (attempt.record.billed) result.billedCalls++;
    deps.observer?.onCall(attempt.record, 0);
    // What every answer teaches the workers: the gateway's cap is at least this.
    if (events.length > 1)
      await recordAnswerSize(
        deps.db,
        earthquakeGatewayKey(deps.gateway.baseUrl),
        { size: events.length, region: { lo: interval.startMs, hi: interval.endMs } },
        attempt.record.finishedAt,
        deps.knowledgeTtlMs,
      );
    const times = events.map((e) => Date.parse(e.time)).filter(Number.isFinite);
    const spanMs = times.length > 1 ? Math.max(...times) - Math.min(...times) : interval.endMs - interval.startMs;
    schedule.answered(step, events.length, spanMs);
  }
  return result;
}
