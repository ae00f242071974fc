/**
 * Truncation follow-up, pure. A window's answer holding `max_results` events may be truncated, and
 * the spec does not say which events the gateway keeps. Only an untruncated answer proves that an
 * interval is complete, unless this gateway has been shown (by a probe) to keep the newest (or the
 * oldest) events when it truncates: then the answer also proves everything newer (older) than its
 * oldest (newest) event, and the window is walked as a chain, one call per `max_results` events.
 * Otherwise the interval is split at quantiles of the returned sample, sized from an estimate of
 * how many events it holds.
 *
 * Every boundary is widened outward to a whole second, strictly past the event it is derived from,
 * so gateways that ignore fractions or treat an end as exclusive still return boundary events.
 */

export type TruncationOrder = 'newest' | 'oldest' | 'mixed';
/** `not-newest`: a probe refuted newest-first; oldest-first is the next hypothesis to test. */
export type OrderVerdict = TruncationOrder | 'unknown' | 'not-newest';

/** Pure: what is known after a probe refuted one hypothesis. */
export function afterRefutation(current: OrderVerdict, refuted: TruncationOrder): OrderVerdict {
  if (refuted === 'newest') return current === 'oldest' || current === 'mixed' ? current : 'not-newest';
  if (refuted === 'oldest') return current === 'not-newest' || current === 'mixed' ? 'mixed' : current === 'oldest' ? 'unknown' : current;
  return current;
}

export interface MsInterval {
  startMs: number;
  endMs: number;
}

export interface SeenEvent {
  id: string;
  timeMs: number;
}

export type FollowUpTask =
  | { kind: 'fetch'; interval: MsInterval; expect: SeenEvent[]; estimate?: number }
  | { kind: 'probe'; interval: MsInterval; target: MsInterval; sample: SeenEvent[]; candidate: 'newest' | 'oldest' }
  | { kind: 'walk'; interval: MsInterval; sample: SeenEvent[]; basis: DensityBasis; chunkEndMs?: number };

/** Events counted per random-sample point seen, for sizing the next chunk of a walk. */
export interface DensityBasis {
  events: number;
  points: number;
}

/** Persisted with the window so that a retried job resumes instead of paying again. */
export interface Frontier {
  window: MsInterval;
  tasks: FollowUpTask[];
}

export interface Answer {
  events: SeenEvent[];
  truncated: boolean;
}

export interface StepResult {
  frontier: Frontier;
  /** Set when this answer proved (or, as 'unknown', voided) how the gateway truncates. */
  verdict: OrderVerdict | null;
  /** A probe refuted this one hypothesis; it says nothing of the other. */
  refuted?: TruncationOrder;
  /** The answer contradicted the verdict it was planned under: the window restarts from scratch. */
  contradiction: string | null;
}

export class UnresolvableTruncationError extends Error {
  override readonly name = 'UnresolvableTruncationError';
}

/** Events per leaf the splitter aims for: below `max_results` so estimation noise rarely re-splits. */
const SPLIT_TARGET_FRACTION = 0.75;
const SECOND_MS = 1000;

export function initialFrontier(window: MsInterval): Frontier {
  return { window, tasks: [{ kind: 'fetch', interval: window, expect: [] }] };
}

/** The interval the next call must query. */
export function nextQuery(frontier: Frontier): MsInterval | null {
  const task = frontier.tasks[0];
  if (!task) return null;
  if (task.kind === 'fetch') return task.interval;
  if (task.kind === 'probe') return task.target;
  return { startMs: task.interval.startMs, endMs: task.chunkEndMs ?? task.interval.endMs };
}

export function purposeOf(frontier: Frontier): FollowUpTask['kind'] | null {
  return frontier.tasks[0]?.kind ?? null;
}

/** Whole second strictly after t. */
export function secondAfter(t: number): number {
  return Math.floor(t / SECOND_MS) * SECOND_MS + SECOND_MS;
}

/** Whole second strictly before t. */
export function secondBefore(t: number): number {
  return Math.ceil(t / SECOND_MS) * SECOND_MS - SECOND_MS;
}

function span(events: SeenEvent[]): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (const e of events) {
    if (e.timeMs < min) min = e.timeMs;
    if (e.timeMs > max) max = e.timeMs;
  }
  return { min, max };
}

function inside(e: SeenEvent, i: MsInterval): boolean {
  return e.timeMs >= i.startMs && e.timeMs <= i.endMs;
}

/**
 * What the previous answer already showed to be in `interval`: an untruncated answer must hold all
 * of it, a truncated one all of it newer (older) than its own oldest (newest) event under a chain.
 */
function missingExpected(task: { interval: MsInterval; expect: SeenEvent[] }, answer: Answer, order: OrderVerdict): SeenEvent[] {
  const got = new Set(answer.events.map((e) => e.id));
  const { min, max } = span(answer.events);
  return task.expect.filter((e) => {
    if (got.has(e.id) || !inside(e, task.interval)) return false;
    if (!answer.truncated) return true;
    if (order === 'newest') return e.timeMs > min;
    if (order === 'oldest') return e.timeMs < max;
    return false;
  });
}

function chainTask(interval: MsInterval, answer: Answer, order: 'newest' | 'oldest'): FollowUpTask | 'no-progress' {
  const { min, max } = span(answer.events);
  const next =
    order === 'newest'
      ? { startMs: interval.startMs, endMs: Math.min(interval.endMs, secondAfter(min)) }
      : { startMs: Math.max(interval.startMs, secondBefore(max)), endMs: interval.endMs };
  const progressed = order === 'newest' ? next.endMs < interval.endMs : next.startMs > interval.startMs;
  if (!progressed || next.endMs <= next.startMs) return 'no-progress';
  return { kind: 'fetch', interval: next, expect: answer.events.filter((e) => inside(e, next)) };
}

/** Cut points at quantiles of a sample, whole seconds strictly inside the interval. */
export function splitInterval(interval: MsInterval, sample: SeenEvent[], parts: number): MsInterval[] {
  const times = sample.map((e) => e.timeMs).sort((a, b) => a - b);
  const cuts = new Set<number>();
  for (let j = 1; j < parts && times.length > 0; j++) {
    const t = times[Math.min(times.length - 1, Math.floor((j * times.length) / parts))]!;
    const cut = Math.round(t / SECOND_MS) * SECOND_MS;
    if (cut > interval.startMs && cut < interval.endMs) cuts.add(cut);
  }
  if (cuts.size === 0) {
    const mid = Math.floor((interval.startMs + interval.endMs) / 2 / SECOND_MS) * SECOND_MS;
    if (mid > interval.startMs && mid < interval.endMs) cuts.add(mid);
  }
  if (cuts.size === 0) {
    throw new UnresolvableTruncationError(
      `more than max_results events between ${new Date(interval.startMs).toISOString()} and ` +
        `${new Date(interval.endMs).toISOString()}: the interval cannot be split further`,
    );
  }
  const bounds = [interval.startMs, ...[...cuts].sort((a, b) => a - b), interval.endMs];
  return bounds.slice(1).map((end, i) => ({ startMs: bounds[i]!, endMs: end }));
}

/** A truncated interval holds more than `maxResults` events, whatever an estimate said. */
function atLeastTruncated(estimate: number, maxResults: number): number {
  return Math.max(estimate, maxResults * 1.3);
}

/**
 * Children inherit a share of the estimate in proportion to the (random) sample inside them, so a
 * child that is still truncated is split by its own estimate instead of blindly in two.
 */
function splitTasks(interval: MsInterval, sample: SeenEvent[], estimatedEvents: number, maxResults: number): FollowUpTask[] {
  const parts = Math.max(2, Math.ceil(estimatedEvents / (maxResults * SPLIT_TARGET_FRACTION)));
  return splitInterval(interval, sample, parts).map((i) => {
    const expect = sample.filter((e) => inside(e, i));
    const estimate = sample.length > 0 ? (estimatedEvents * expect.length) / sample.length : estimatedEvents / parts;
    return { kind: 'fetch' as const, interval: i, expect, estimate };
  });
}

/**
 * The probe tests the likelier chain hypothesis on the half of the interval where the two
 * hypotheses disagree: if the gateway keeps the newest events, an untruncated answer over
 * [median, end] holds nothing newer than the truncated answer's oldest event that it lacked.
 */
function probeTask(interval: MsInterval, answer: Answer, order: OrderVerdict): FollowUpTask {
  // Newest-first is the upstream catalog's default, so it is tested first; oldest-first only once
  // newest-first is refuted. Where the events sit in the window says nothing: it may run past them.
  const candidate = order === 'not-newest' ? 'oldest' : 'newest';
  const times = answer.events.map((e) => e.timeMs).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const target =
    candidate === 'newest'
      ? { startMs: Math.max(interval.startMs, secondBefore(median)), endMs: interval.endMs }
      : { startMs: interval.startMs, endMs: Math.min(interval.endMs, secondAfter(median)) };
  return { kind: 'probe', interval, target, sample: answer.events, candidate };
}

function afterTruncatedFetch(task: { interval: MsInterval; estimate?: number }, answer: Answer, order: OrderVerdict, maxResults: number): FollowUpTask[] {
  const { interval } = task;
  if (order === 'newest' || order === 'oldest') {
    const next = chainTask(interval, answer, order);
    if (next !== 'no-progress') return [next];
    return splitTasks(interval, answer.events, 2 * maxResults, maxResults);
  }
  // Without an estimate a split is blind; the probe doubles as a second sample to estimate from.
  if (order === 'unknown' || order === 'not-newest' || task.estimate === undefined) return [probeTask(interval, answer, order)];
  return [walkTask(interval, answer.events, atLeastTruncated(task.estimate, maxResults), maxResults)];
}


/** Events a walk chunk aims for: well below `max_results`, since sample spacing is noisy. */
const WALK_TARGET_EVENTS_FRACTION = 0.65;
/** How many sample points the first estimate is worth before exact counts replace it. */
const PRIOR_POINTS = 3;

/**
 * Random order: walk the interval in chunks sized from a density (events per random-sample point)
 * that each untruncated chunk's exact count refines, so one bad estimate cannot blow up the cost.
 */
export function walkTask(interval: MsInterval, sample: SeenEvent[], estimatedEvents: number, maxResults: number): FollowUpTask {
  const inside_ = sample.filter((e) => inside(e, interval)).sort((a, b) => a.timeMs - b.timeMs);
  const perPoint = Math.max(estimatedEvents, 1) / Math.max(1, inside_.length);
  const basis = { events: perPoint * PRIOR_POINTS, points: PRIOR_POINTS };
  return withChunk({ kind: 'walk', interval, sample: inside_, basis }, maxResults);
}

function withChunk(task: Extract<FollowUpTask, { kind: 'walk' }>, maxResults: number): Extract<FollowUpTask, { kind: 'walk' }> {
  const perPoint = task.basis.events / task.basis.points;
  const take = Math.max(1, Math.floor((maxResults * WALK_TARGET_EVENTS_FRACTION) / perPoint));
  const points = task.sample.filter((e) => e.timeMs > task.interval.startMs);
  if (take >= points.length) return { ...task, chunkEndMs: undefined };
  // Cut between the last point taken and the next one, on a whole second strictly inside.
  const a = points[take - 1]!.timeMs;
  const b = points[take]!.timeMs;
  const cut = Math.round((a + b) / 2 / SECOND_MS) * SECOND_MS;
  const ok = cut > task.interval.startMs && cut < task.interval.endMs;
  return { ...task, chunkEndMs: ok ? cut : undefined };
}

function afterWalk(task: Extract<FollowUpTask, { kind: 'walk' }>, answer: Answer, maxResults: number): FollowUpTask[] {
  const chunk = { startMs: task.interval.startMs, endMs: task.chunkEndMs ?? task.interval.endMs };
  const points = task.sample.filter((e) => inside(e, chunk) && e.timeMs > task.interval.startMs).length;
  const counted = answer.truncated ? maxResults * 1.3 : answer.events.length;
  const basis = { events: task.basis.events + counted, points: task.basis.points + Math.max(points, answer.truncated ? 0 : 0.5) };
  const uncut = task.chunkEndMs === undefined && chunk.startMs === task.interval.startMs;
  // A walk over an interval it could not cut must split it instead, or it would repeat itself.
  const sub = !answer.truncated
    ? []
    : uncut
      ? splitTasks(chunk, answer.events, counted, maxResults)
      : [walkTask(chunk, answer.events, counted, maxResults)];
  if (task.chunkEndMs === undefined) return sub;
  const rest = { startMs: chunk.endMs, endMs: task.interval.endMs };
  const next = withChunk({ kind: 'walk', interval: rest, sample: task.sample.filter((e) => e.timeMs >= rest.startMs), basis }, maxResults);
  return [...sub, next];
}

/**
 * Chapman's bias-corrected Lincoln-Petersen estimate of the events in the probed part, scaled up
 * to the whole interval; it stays finite when the two samples share no event.
 */
export function estimateEvents(sample: SeenEvent[], target: MsInterval, probe: Answer): number {
  const sampleInTarget = sample.filter((e) => inside(e, target));
  const probeIds = new Set(probe.events.map((e) => e.id));
  const recaptured = sampleInTarget.filter((e) => probeIds.has(e.id)).length;
  const inTarget = probe.truncated
    ? ((sampleInTarget.length + 1) * (probe.events.length + 1)) / (recaptured + 1) - 1
    : probe.events.length;
  const share = Math.max(1, sampleInTarget.length) / Math.max(1, sample.length);
  return Math.max(sample.length, inTarget / share);
}

function afterProbe(task: Extract<FollowUpTask, { kind: 'probe' }>, answer: Answer, maxResults: number): { tasks: FollowUpTask[]; verdict: TruncationOrder | null; refuted?: TruncationOrder } {
  const sampleIds = new Set(task.sample.map((e) => e.id));
  const { min, max } = span(task.sample);
  const unexplained = answer.events.filter(
    (e) => !sampleIds.has(e.id) && (task.candidate === 'newest' ? e.timeMs > min : e.timeMs < max),
  );
  if (!answer.truncated && unexplained.length === 0) {
    const next = chainTask(task.interval, { events: task.sample, truncated: true }, task.candidate);
    return { verdict: task.candidate, tasks: next === 'no-progress' ? splitTasks(task.interval, task.sample, 2 * maxResults, maxResults) : [next] };
  }
  const estimated = estimateEvents(task.sample, task.target, answer);
  const rest = task.candidate === 'newest'
    ? { startMs: task.interval.startMs, endMs: Math.min(task.interval.endMs, secondAfter(task.target.startMs)) }
    : { startMs: Math.max(task.interval.startMs, secondBefore(task.target.endMs)), endMs: task.interval.endMs };
  // An untruncated probe already covers its target; only the rest of the interval is left.
  const remaining = answer.truncated ? task.interval : rest;
  const sample = [...task.sample, ...answer.events].filter((e) => inside(e, remaining));
  const share = answer.truncated ? 1 : Math.max(0, 1 - answer.events.length / estimated);
  const tasks = remaining.endMs > remaining.startMs
    ? [walkTask(remaining, answer.truncated ? task.sample : sample, Math.max(1, estimated * share), maxResults)]
    : [];
  return { verdict: null, refuted: task.candidate, tasks };
}

/**
 * Advance the frontier with the answer to `nextQuery(frontier)`. `order` is what is known of this
 * gateway; the result says what was learned.
 */
export function advance(frontier: Frontier, answer: Answer, order: OrderVerdict, maxResults: number): StepResult {
  const [task, ...rest] = frontier.tasks;
  if (!task) throw new Error('advance() called on a finished frontier');
  if (task.kind === 'probe') {
    const { tasks, verdict, refuted } = afterProbe(task, answer, maxResults);
    return { frontier: { window: frontier.window, tasks: [...tasks, ...rest] }, verdict, refuted, contradiction: null };
  }
  if (task.kind === 'walk') {
    return { frontier: { window: frontier.window, tasks: [...afterWalk(task, answer, maxResults), ...rest] }, verdict: null, contradiction: null };
  }
  const missing = missingExpected(task, answer, order);
  if (missing.length > 0) {
    return {
      // Whatever a chain claimed under the contradicted verdict is void: the window starts over.
      frontier: initialFrontier(frontier.window),
      verdict: 'unknown',
      contradiction:
        `answer for ${new Date(task.interval.startMs).toISOString()}..${new Date(task.interval.endMs).toISOString()} ` +
        `lacks ${missing.length} event(s) an earlier answer showed there (e.g. ${missing[0]!.id})`,
    };
  }
  if (!answer.truncated) return { frontier: { window: frontier.window, tasks: rest }, verdict: null, contradiction: null };
  return {
    frontier: {
      window: frontier.window,
      tasks: [...afterTruncatedFetch(task, answer, order, maxResults), ...rest],
    },
    verdict: null,
    contradiction: null,
  };
}
