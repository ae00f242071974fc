import { z } from 'zod';
import type { CallContext } from '../db/writes/audit.js';
import { recordEarthquakeAnswer } from '../db/writes/earthquake-answer.js';
import { loadPartition } from '../db/writes/partitions.js';
import { GatewayError } from '../gateway/errors.js';
import { EARTHQUAKE_PROVIDER, LIMITS, type EarthquakeRequest } from '../gateway/schemas.js';
import { toRfc3339 } from '../gateway/time.js';
import {
  advance,
  afterRefutation,
  initialFrontier,
  nextQuery,
  purposeOf,
  UnresolvableTruncationError,
  type Frontier,
  type MsInterval,
} from '../planning/truncation.js';
import type { EarthquakeWindowJob } from '../queue/payloads.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { failedAttempt } from './failed-attempt.js';

export const MAX_RESULTS = LIMITS.maxResultsCeiling;

const intervalSchema = z.object({ startMs: z.number(), endMs: z.number() });
const seenSchema = z.object({ id: z.string(), timeMs: z.number() });
const frontierSchema = z.object({
  window: intervalSchema,
  tasks: z.array(
    z.union([
      z.object({ kind: z.literal('fetch'), interval: intervalSchema, expect: z.array(seenSchema), estimate: z.number().optional() }),
      z.object({
        kind: z.literal('probe'),
        interval: intervalSchema,
        target: intervalSchema,
        sample: z.array(seenSchema),
        candidate: z.enum(['newest', 'oldest']),
      }),
    ]),
  ),
});

/** Pure: the gateway request for one interval of a window job. */
export function earthquakeRequest(job: EarthquakeWindowJob, q: MsInterval): EarthquakeRequest {
  const { minMagnitude, circle } = job.filters;
  return {
    provider: EARTHQUAKE_PROVIDER,
    start_time: toRfc3339(q.startMs),
    end_time: toRfc3339(q.endMs),
    ...(minMagnitude === null ? {} : { min_magnitude: minMagnitude }),
    ...(circle ? { latitude: circle.latitude, longitude: circle.longitude, radius_km: circle.radiusKm } : {}),
    max_results: MAX_RESULTS,
  };
}

function resumeFrontier(stored: unknown, window: MsInterval): Frontier {
  const parsed = frontierSchema.safeParse(stored);
  const same = parsed.success && parsed.data.window.startMs === window.startMs && parsed.data.window.endMs === window.endMs;
  return same && parsed.data.tasks.length > 0 ? parsed.data : initialFrontier(window);
}

export interface WindowOutcome {
  calls: number;
  rowsWritten: number;
  skipped: boolean;
}

/**
 * Covers one window with untruncated answers (or a proven chain), writing each answer with its
 * audit row and the remaining frontier, so a retry resumes where the last attempt stopped.
 */
export async function processEarthquakeWindow(job: EarthquakeWindowJob, ctx: JobContext, deps: ProcessorDeps): Promise<WindowOutcome> {
  const { db, gateway, log, truncation } = deps;
  const partition = await loadPartition(db, job.streamKey, job.partitionKey);
  if (partition?.state === 'done') return { calls: 0, rowsWritten: 0, skipped: true };
  const window = { startMs: job.windowStartMs, endMs: job.windowEndMs };
  let frontier = resumeFrontier(partition?.frontier, window);
  const orderKey = `${gateway.baseUrl}|earthquake`;
  const outcome: WindowOutcome = { calls: 0, rowsWritten: 0, skipped: false };
  for (let q = nextQuery(frontier); q; q = nextQuery(frontier)) {
    const call: CallContext = { streamKey: job.streamKey, partitionKey: job.partitionKey, jobId: ctx.jobId, attempt: ctx.attempt, purpose: purposeOf(frontier)! };
    const attempt = await gateway.queryEarthquakes(earthquakeRequest(job, q), ctx.signal);
    outcome.calls++;
    if (!attempt.ok) throw await failedAttempt(deps, attempt.record, attempt.cause, call, logFields(job, q, ctx));
    const events = attempt.result.events ?? [];
    const truncated = events.length >= MAX_RESULTS;
    const seen = events.map((e) => ({ id: e.id, timeMs: Date.parse(e.time) }));
    let step;
    try {
      step = advance(frontier, { events: seen, truncated }, truncation.get(orderKey), MAX_RESULTS);
    } catch (e) {
      // The events are sound; keep them, then fail the window for good with the reason.
      await recordEarthquakeAnswer(db, attempt.record, call, events, truncated, { frontier, done: false });
      if (e instanceof UnresolvableTruncationError) throw new GatewayError('parameters', e.message, { cause: e });
      throw e;
    }
    if (step.verdict) truncation.set(orderKey, step.verdict);
    if (step.refuted) truncation.set(orderKey, afterRefutation(truncation.get(orderKey), step.refuted));
    if (step.contradiction) log.warn({ ...logFields(job, q, ctx), reason: step.contradiction }, 'gateway contradicted its truncation order; window restarts');
    const written = await recordEarthquakeAnswer(db, attempt.record, call, events, truncated, {
      frontier: step.frontier,
      done: step.frontier.tasks.length === 0,
    });
    deps.observer?.onCall(attempt.record, written.rowsWritten);
    outcome.rowsWritten += written.rowsWritten;
    log.info(
      { ...logFields(job, q, ctx), purpose: call.purpose, outcome: attempt.record.outcome, units: attempt.record.units, returned: events.length, truncated, rowsWritten: written.rowsWritten, durationMs: attempt.record.durationMs, verdict: step.verdict ?? undefined },
      'gateway call',
    );
    frontier = step.frontier;
  }
  return outcome;
}

function logFields(job: EarthquakeWindowJob, q: MsInterval, ctx: JobContext) {
  return {
    operation: 'earthquake',
    stream: job.streamKey,
    window: `${toRfc3339(q.startMs)}/${toRfc3339(q.endMs)}`,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
  };
}
