/**
 * A call of a window read, once landed. A failure is audited and kept (the first one is thrown
 * when the read stops); an answer is written with its audit row and the frontier it leaves in one
 * transaction, so that a job stopped after any call resumes without paying for that call again.
 */
import type { CallContext } from '../db/audit.js';
import { recordEarthquakeAnswer } from '../db/earthquake-events.js';
import { GaveUpError } from '../errors.js';
import type { Attempt } from '../gateway/attempt.js';
import type { EarthquakeResult } from '../gateway/schemas.js';
import { advance, type Query, type Step } from '../planning/truncation/index.js';
import { failedAttempt } from './call.js';
import { durable } from './durable.js';
import { learnFromAnswer, tally } from './gateway-facts.js';
import { logFields, type Landed, type WindowRead } from './window-read.js';

interface Answered {
  key: string;
  query: Query;
  call: CallContext;
  attemptId: number;
  attempt: Extract<Attempt<EarthquakeResult>, { ok: true }>;
}

/** `inFlight`: the read's calls still out, for the log. */
export async function land(read: WindowRead, landed: Landed, inFlight: number): Promise<void> {
  read.outcome.calls++;
  if ('error' in landed) {
    read.failure ??= landed.error;
    return;
  }
  const { attemptId, attempt } = landed.made;
  if (!attempt.ok) {
    // Every failed lane is audited and counted, not only the first.
    const fields = logFields(read.job, landed.query, read.ctx);
    const error = await failedAttempt(
      read.deps,
      attemptId,
      attempt.record,
      attempt.cause,
      landed.call,
      read.ctx,
      fields,
    );
    read.failure ??= error;
    return;
  }
  await applyAnswer(read, { ...landed, attemptId, attempt }, inFlight);
  // The promises that carried this answer here may have lived long enough to reach the old
  // generation; dead or not, they keep what they point to alive through every minor GC until the
  // next full one, so each answer was promoted whole. Emptied once used, its events die young.
  if (attempt.result.events) attempt.result.events.length = 0;
}

async function applyAnswer(read: WindowRead, landed: Answered, inFlight: number): Promise<void> {
  const { db, log } = read.deps;
  const { attemptId, attempt } = landed;
  const events = attempt.result.events ?? [];
  const answer = { events: events.map((e) => ({ id: e.id, timeMs: Date.parse(e.time) })) };
  const step = advance(read.frontier, answer, landed.key);
  // The read ends after every answer is in (deletions reconciled first): an answer only moves the frontier.
  const progress = { frontier: step.frontier, finish: null };
  const written = await durable(
    () => recordEarthquakeAnswer(db, attemptId, attempt.record, landed.call, events, step.saturated, progress),
    read.ctx,
    log,
  );
  read.deps.observer?.onCall(attempt.record, written.rowsWritten);
  await shareCapFloor(read, step, attempt.record.finishedAt);
  tally(read.evidence, step);
  read.outcome.rowsWritten += written.rowsWritten;
  const fields = logFields(read.job, landed.query, read.ctx);
  for (const note of step.notes)
    log.warn({ ...fields, note }, 'gateway truncation order contradicted; that part of the window is read again');
  log.info(
    {
      ...fields,
      outcome: attempt.record.outcome,
      units: attempt.record.units,
      returned: events.length,
      saturated: step.saturated,
      rowsWritten: written.rowsWritten,
      durationMs: attempt.record.durationMs,
      inFlight,
    },
    'gateway call',
  );
  read.frontier = step.frontier;
  if (step.failure) read.failure ??= new GaveUpError(step.failure);
}

/** A floor raised is shared at once; one that held is refreshed once per job, not once per call. */
async function shareCapFloor(read: WindowRead, step: Step, at: Date): Promise<void> {
  const capFloor = read.frontier.capFloor;
  if (step.learned.answerSize > capFloor || !read.capShared)
    read.capShared = (await learnFromAnswer(read.deps, step, capFloor, at)) || read.capShared;
}
