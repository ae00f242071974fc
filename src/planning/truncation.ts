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
export type OrderVerdict = TruncationOrder | 'unknown';

export interface MsInterval {
  startMs: number;
  endMs: number;
}

export interface SeenEvent {
  id: string;
  timeMs: number;
}

export type FollowUpTask =
  | { kind: 'fetch'; interval: MsInterval; expect: SeenEvent[] }
  | { kind: 'probe'; interval: MsInterval; target: MsInterval; sample: SeenEvent[]; candidate: 'newest' | 'oldest' };

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
  /** Set when this answer taught us (or contradicted) how the gateway truncates. */
  verdict: OrderVerdict | null;
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
  return task.kind === 'fetch' ? task.interval : task.target;
}

export function purposeOf(frontier: Frontier): 'fetch' | 'probe' | null {
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

function splitTasks(interval: MsInterval, sample: SeenEvent[], estimatedEvents: number, maxResults: number): FollowUpTask[] {
  const parts = Math.max(2, Math.ceil(estimatedEvents / (maxResults * SPLIT_TARGET_FRACTION)));
  return splitInterval(interval, sample, parts).map((i) => ({
    kind: 'fetch' as const,
    interval: i,
    expect: sample.filter((e) => inside(e, i)),
  }));
}

/**
 * The probe tests the likelier chain hypothesis on the half of the interval where the two
 * hypotheses disagree: if the gateway keeps the newest events, an untruncated answer over
 * [median, end] holds nothing newer than the truncated answer's oldest event that it lacked.
 */
function probeTask(interval: MsInterval, answer: Answer): FollowUpTask {
  const { min, max } = span(answer.events);
  const candidate = interval.endMs - max <= min - interval.startMs ? 'newest' : 'oldest';
  const times = answer.events.map((e) => e.timeMs).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const target =
    candidate === 'newest'
      ? { startMs: Math.max(interval.startMs, secondBefore(median)), endMs: interval.endMs }
      : { startMs: interval.startMs, endMs: Math.min(interval.endMs, secondAfter(median)) };
  return { kind: 'probe', interval, target, sample: answer.events, candidate };
}

function afterTruncatedFetch(interval: MsInterval, answer: Answer, order: OrderVerdict, maxResults: number): FollowUpTask[] {
  if (order === 'newest' || order === 'oldest') {
    const next = chainTask(interval, answer, order);
    if (next !== 'no-progress') return [next];
    return splitTasks(interval, answer.events, 2 * maxResults, maxResults);
  }
  if (order === 'unknown') return [probeTask(interval, answer)];
  return splitTasks(interval, answer.events, 2 * maxResults, maxResults);
}

/** Lincoln-Petersen estimate of the events in the probed part, scaled up to the whole interval. */
export function estimateEvents(sample: SeenEvent[], target: MsInterval, probe: Answer): number {
  const sampleInTarget = sample.filter((e) => inside(e, target));
  const probeIds = new Set(probe.events.map((e) => e.id));
  const recaptured = sampleInTarget.filter((e) => probeIds.has(e.id)).length;
  const inTarget = probe.truncated
    ? (sampleInTarget.length * probe.events.length) / Math.max(1, recaptured)
    : probe.events.length;
  const share = Math.max(1, sampleInTarget.length) / Math.max(1, sample.length);
  return Math.max(sample.length, inTarget / share);
}

function afterProbe(task: Extract<FollowUpTask, { kind: 'probe' }>, answer: Answer, maxResults: number): { tasks: FollowUpTask[]; verdict: TruncationOrder } {
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
    ? splitTasks(remaining, answer.truncated ? task.sample : sample, estimated * share, maxResults)
    : [];
  return { verdict: 'mixed', tasks };
}

/**
 * Advance the frontier with the answer to `nextQuery(frontier)`. `order` is what is known of this
 * gateway; the result says what was learned.
 */
export function advance(frontier: Frontier, answer: Answer, order: OrderVerdict, maxResults: number): StepResult {
  const [task, ...rest] = frontier.tasks;
  if (!task) throw new Error('advance() called on a finished frontier');
  if (task.kind === 'probe') {
    const { tasks, verdict } = afterProbe(task, answer, maxResults);
    return { frontier: { window: frontier.window, tasks: [...tasks, ...rest] }, verdict, contradiction: null };
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
      tasks: [...afterTruncatedFetch(task.interval, answer, order, maxResults), ...rest],
    },
    verdict: null,
    contradiction: null,
  };
}
