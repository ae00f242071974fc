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
import { advance, learnShared, type Query, type Region, type Step } from '../planning/truncation/index.js';
import { failedAttempt } from './call.js';
import { durable } from './durable.js';
import { gatewayKey, learnFromAnswer, tally } from './gateway-facts.js';
import { releaseProbe } from '../db/gateway-knowledge.js';
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
  if ('known' in landed) {
    // No call was made: what other reads learned meanwhile settled the answers waiting for the probe.
    read.frontier = learnShared(read.frontier, landed.known);
    return;
  }
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
    // A probe is optional: a place the gateway will not be asked about (its clock behind ours, say)
    // tells nothing, and the next place is probed; it never fails the window.
    if (landed.query.purpose === 'probe' && error.kind === 'parameters') {
      read.frontier = advance(read.frontier, { events: [] }, landed.key).frontier;
      return;
    }
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
  const floorBefore = read.frontier.cap.floor;
  const step = advance(read.frontier, answer, landed.key);
  // The read ends after every answer is in (deletions reconciled first): an answer only moves the frontier.
  const progress = { frontier: step.frontier, finish: null };
  // A probe's events are outside the stream's filters and window: audited and billed, not stored.
  const rows = landed.query.purpose === 'probe' ? [] : events;
  const written = await durable(
    () => recordEarthquakeAnswer(db, attemptId, attempt.record, landed.call, rows, step.full, progress),
    read.ctx,
    log,
  );
  read.deps.observer?.onCall(attempt.record, written.rowsWritten);
  await shareCap(read, step, landed.query.region, floorBefore, attempt.record.finishedAt);
  // The probe answered: whoever waits for it reads what it taught, and the next one may probe.
  if (landed.query.purpose === 'probe') await releaseProbe(db, gatewayKey(read.deps));
  tally(read.evidence, step);
  read.outcome.rowsWritten += written.rowsWritten;
  const fields = logFields(read.job, landed.query, read.ctx);
  // Each note says what the answer changed in the plan: a guess that failed, a crowded second, the cap in question.
  for (const note of step.notes) log.info({ ...fields, note }, 'window plan changed');
  log.info(
    {
      ...fields,
      outcome: attempt.record.outcome,
      units: attempt.record.units,
      returned: events.length,
      full: step.full,
      held: step.held,
      rowsWritten: written.rowsWritten,
      durationMs: attempt.record.durationMs,
      inFlight,
    },
    'gateway call',
  );
  read.frontier = step.frontier;
  if (step.failure) read.failure ??= new GaveUpError(step.failure);
}

/**
 * A floor raised (and a probe's size) is shared at once; one that held is refreshed once per job,
 * not once per call.
 */
async function shareCap(read: WindowRead, step: Step, region: Region, floorBefore: number, at: Date): Promise<void> {
  const raised = step.learned.answerSize > floorBefore || step.learned.measured !== null;
  if (raised || !read.capShared)
    read.capShared = (await learnFromAnswer(read.deps, step, region, floorBefore, at)) || read.capShared;
}
