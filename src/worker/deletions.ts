/**
 * After a window's re-read proved it complete: stored events of the stream that no answer of the
 * read returned are marked deleted on proof (planning/deletions.ts), or updated when a check finds
 * them revised. Best effort by design: a failed check leaves its candidates unmarked for the next
 * read, and never fails a window whose events are already stored.
 */
import { commitFailedAttempt } from '../db/answers.js';
import { deletionCandidates, markDeleted, recordDeletionCheck } from '../db/earthquake-events.js';
import { NO_FILTERS } from '../domain/filters.js';
import { toRfc3339 } from '../domain/time.js';
import { planChecks, provenByWindow, judgeCheck, type Candidate, type DeletionCheck } from '../planning/deletions.js';
import { earthquakeRequest } from '../planning/earthquake-request.js';
import { windowRegion, type Frontier, type Region } from '../planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../planning/work.js';
import { earthquakeCall, jobCall } from './call.js';
import type { JobContext, ProcessorDeps } from './deps.js';
import { durable } from './durable.js';

export interface DeletionOutcome {
  candidates: number;
  marked: number;
  revised: number;
  checks: number;
  /** Candidates no answer could prove absent or present (a check stayed full, or failed). */
  unproven: number;
}

/** At most this many checks per window: a catalog that lost far more than this is re-read, not checked. */
const MAX_CHECKS = 50;

export async function reconcileDeletions(
  job: EarthquakeWindowJob,
  f: Frontier,
  lastExecutionId: number,
  ctx: JobContext,
  deps: ProcessorDeps,
  backfillId: string | null,
): Promise<DeletionOutcome> {
  const outcome: DeletionOutcome = { candidates: 0, marked: 0, revised: 0, checks: 0, unproven: 0 };
  // Only a read of the whole window proves anything about it (a partial window retried does not).
  if (f.startedAtMs === 0) return outcome;
  const seenSince = new Date(f.startedAtMs);
  const region = windowRegion(f.window);
  // A first read skips what other reads proved: what it did not ask says nothing of deletions.
  const candidates = await deletionCandidates(deps.db, {
    filters: job.filters,
    region,
    excluded: [...f.unresolved, ...outsideScope(region, f.scope)],
    seenSince,
  });
  outcome.candidates = candidates.length;
  if (candidates.length === 0) return outcome;
  const unfiltered = job.filters.minMagnitude === null && job.filters.circle === null;
  const inScope = (c: Candidate) => f.scope.some((r) => provenByWindow(c, r, unfiltered));
  const byWindow = candidates.filter(inScope).map((c) => c.id);
  if (byWindow.length > 0) {
    outcome.marked += await durable(
      () => deps.db.transaction((tx) => markDeleted(tx, byWindow, lastExecutionId, new Date(), seenSince)),
      ctx,
      deps.log,
    );
  }
  const queue: DeletionCheck[] = planChecks(candidates.filter((c) => !byWindow.includes(c.id)));
  while (queue.length > 0 && outcome.checks < MAX_CHECKS && !ctx.stopping?.()) {
    const check = queue.shift()!;
    const call = jobCall(job, ctx, 'deletion-check', backfillId);
    const request = earthquakeRequest(NO_FILTERS, { region: check.region, circle: null });
    const made = await earthquakeCall(deps, call, request, ctx).catch((err: unknown) =>
      err instanceof Error ? err : new Error(String(err)),
    );
    outcome.checks++;
    if (made instanceof Error || !made.attempt.ok) {
      const why = made instanceof Error ? made.message : made.attempt.record.errorDetail;
      if (!(made instanceof Error))
        await durable(() => commitFailedAttempt(deps.db, made.attemptId, made.attempt.record, call), ctx, deps.log);
      deps.log.warn(
        {
          stream: job.streamKey,
          window: job.partitionKey,
          check: `${toRfc3339(check.region.lo)}/${toRfc3339(check.region.hi)}`,
          err: why,
        },
        'deletion check failed: its candidates stay unmarked until the next re-read',
      );
      break;
    }
    const events = made.attempt.result.events ?? [];
    const verdict = judgeCheck(check, candidates, new Set(events.map((e) => e.id)), events.length, f.cap.floor);
    const present = events.filter((e) => verdict.present.includes(e.id));
    const written = await durable(
      () => recordDeletionCheck(deps.db, made.attemptId, made.attempt.record, call, present, verdict.absent, seenSince),
      ctx,
      deps.log,
    );
    deps.observer?.onCall(made.attempt.record, written.rowsWritten);
    outcome.revised += present.length;
    outcome.marked += written.marked;
    queue.push(...verdict.again);
    if (verdict.again.length === 0)
      outcome.unproven += check.ids.length - verdict.absent.length - verdict.present.length;
  }
  outcome.unproven += queue.reduce((n, c) => n + c.ids.length, 0);
  return outcome;
}

/** The stretches of `region` no scope region covers. */
export function outsideScope(region: Region, scope: readonly Region[]): Region[] {
  const out: Region[] = [];
  let cursor = region.lo;
  for (const r of [...scope].sort((a, b) => a.lo - b.lo)) {
    if (r.lo > cursor) out.push({ lo: cursor, hi: r.lo });
    cursor = Math.max(cursor, r.hi);
  }
  if (cursor < region.hi) out.push({ lo: cursor, hi: region.hi });
  return out;
}
