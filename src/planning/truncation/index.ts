/**
 * Truncation follow-up, pure: from one window's answers, the next queries, until every instant of
 * the window is covered by an answer that proves it complete (see docs/design.md, "Nothing lost").
 *
 * The rule: a part of the window is complete only when an answer whose query covers it holds
 * fewer events than the gateway's cap (the cap floor, cap.ts). A full answer proves nothing,
 * whatever order the gateway keeps; its events are stored and size the next query. The window is
 * covered by walks (chunks sized to come back below the cap), and a stretch too short to cut by
 * time that still comes back full is cut by place (circles) or left unresolved. A full answer that
 * may only be full because the cap is not known is held until the cap probe settles it.
 */
import type { Circle } from '../../domain/filters.js';
import type { Interval } from '../../domain/interval.js';
import { SECOND_MS } from '../../domain/time.js';
import {
  afterAnswer,
  afterProbe,
  answerAsProbe,
  askedProbes,
  capText,
  inQuestion,
  isFull,
  measuredByOverflow,
  measuredByRepeat,
  nextProbeRegion,
  sizingCap,
  withShared,
  type Cap,
  type SharedCap,
} from './cap.js';
import { circleCuts, sphereCover } from './circles.js';
import {
  mergeEvents,
  regionText,
  type Answer,
  type AnswersSeen,
  type Frontier,
  type Order,
  type OrderPreference,
  type Region,
  type ScanTask,
  type SeenEvent,
  type Task,
  type TaskKind,
  type WalkTask,
} from './frontier.js';
import { resumeFrontier, type WindowKnowledge } from './knowledge.js';
import { fitOf, type Fit } from './fit.js';
import { startWalk, walkQuery, type Sizing } from './place.js';
import { holdsStored, leftOver, recountOf } from './sample.js';
import { stepWalk } from './walk.js';

export * from './frontier.js';
export * from './cap.js';
export * from './knowledge.js';
export { savedFrontierSchema } from './saved-frontier.js';
export { splitForLanes } from './lanes.js';
export { FILL, walkQuery } from './place.js';

type Tally = { confirmed: number; refuted: number };

/** Whether other windows saw the order `preferOf` hints hold at least once (faded tallies). */
export function hintBackedBy(stats: { newest: Tally; oldest: Tally }): boolean {
  const prefer = preferOf(stats);
  return prefer !== 'none' && stats[prefer].confirmed >= 1;
}

/** A gateway that refuted a guess this often in a window is read without it there. */
export const MAX_REFUTATIONS = 2;
const MIN_CAP_FOR_CIRCLES = 10;
/** Answer sizes kept for the reason a read gives up. */
const RECENT_ANSWERS = 6;

/**
 * The hint from earlier windows: an order is guessed first while it held at least as often as it
 * failed; a gateway that kept neither is read without a guess.
 */
export function preferOf(stats: { newest: Tally; oldest: Tally }): OrderPreference {
  const score = (t: Tally) => (t.confirmed + 1) / (t.confirmed + t.refuted + 2);
  const newest = score(stats.newest);
  const oldest = score(stats.oldest);
  if (newest >= 0.5 && newest >= oldest) return 'newest';
  if (oldest >= 0.5) return 'oldest';
  return 'none';
}

export interface Query {
  region: Region;
  /** Replaces the stream's (absent) circle: a crowded second cut by place. */
  circle: Circle | null;
  /** The cap probe asks without the stream's filters. */
  unfiltered: boolean;
  purpose: TaskKind;
}

/**
 * A task's identity while its query is in flight: the answer is applied to the task with this key,
 * whatever was applied meanwhile. A task changed meanwhile has a new key, and an answer to the old
 * one only counts as a call (its events are stored all the same).
 */
export function taskKey(t: Task): string {
  if (t.kind === 'probe') return 'probe';
  if (t.kind === 'scan')
    return `scan:${t.region.lo}:${t.region.hi}:${t.circle.latitude},${t.circle.longitude},${t.circle.radiusKm}`;
  return `walk:${t.from}:${t.region.lo}:${t.region.hi}:${t.reach ?? ''}`;
}

function queryOf(task: Task): Query {
  if (task.kind === 'walk') return { region: walkQuery(task), circle: null, unfiltered: false, purpose: 'walk' };
  if (task.kind === 'probe') return { region: task.region, circle: null, unfiltered: true, purpose: 'probe' };
  const { latitude, longitude, radiusKm } = task.circle;
  return { region: task.region, circle: { latitude, longitude, radiusKm }, unfiltered: false, purpose: 'scan' };
}

/** A task whose answer is held waits for the probe: it is not asked again. */
const askable = (t: Task): boolean => t.kind === 'probe' || t.held === null;

export function nextQuery(f: Frontier): Query | null {
  const task = f.tasks.find(askable);
  return task ? queryOf(task) : null;
}

/**
 * Up to `max` queries that may be asked at once, in task order, skipping tasks already in flight
 * (`busy` keys) and tasks waiting on the probe. Each answer is applied with `advance(frontier,
 * answer, key)` in any order.
 */
export function nextQueries(f: Frontier, busy: ReadonlySet<string>, max: number): Array<{ key: string; query: Query }> {
  const out: Array<{ key: string; query: Query }> = [];
  for (const task of f.tasks) {
    if (out.length >= max) break;
    const key = taskKey(task);
    if (askable(task) && !busy.has(key) && !out.some((q) => q.key === key)) out.push({ key, query: queryOf(task) });
  }
  return out;
}

/**
 * What a finished read proved complete, as closed intervals of epoch ms within the window: its
 * scope less the intervals no query could resolve.
 */
export function provenIntervals(f: Frontier): Array<{ lo: number; hi: number }> {
  const clip = (r: Region) => ({ lo: Math.max(r.lo, f.window.startMs), hi: Math.min(r.hi, f.window.endMs) });
  const cuts = [...f.unresolved].sort((a, b) => a.lo - b.lo);
  return f.scope.map(clip).flatMap((r) => {
    const out: Array<{ lo: number; hi: number }> = [];
    let lo = r.lo;
    for (const u of cuts) {
      if (u.hi <= lo || u.lo >= r.hi) continue;
      if (u.lo > lo) out.push({ lo, hi: u.lo });
      lo = Math.max(lo, u.hi);
    }
    if (lo <= r.hi) out.push({ lo, hi: r.hi });
    return out.filter((x) => x.lo <= x.hi);
  });
}

export interface Step {
  frontier: Frontier;
  /** The answer may be truncated: as large as the cap floor when it landed (the audit's `truncated`). */
  full: boolean;
  /** The answer waits for the cap probe to say whether it proves its query. */
  held: boolean;
  /** `measured`: the cap this answer (a probe) measured, for the other readers. */
  learned: { answerSize: number; measured: number | null; confirmed: Order[]; refuted: Order[] };
  /** What the answer changed in the plan, for the log. */
  notes: string[];
  /** No task is left: the window is done, or partial when `unresolved` is not empty. */
  finished: boolean;
  /** The window spent far more calls than its answers show it needs: stop and say why. */
  failure: string | null;
}

/** Calls a window's run may spend: a multiple of what its own answers show it needs, plus a constant. */
export function callCeiling(eventsProven: number, capFloor: number, window: Interval): number {
  // Searching a window for one crowded second takes about log2(seconds) calls however few events it holds.
  const search = Math.ceil(Math.log2(Math.max(2, (window.endMs - window.startMs) / SECOND_MS)));
  return 6 * Math.ceil(eventsProven / capFloor) + 3 * search + 20;
}

/**
 * The orders still worth guessing in this window, likeliest first: the hint first, the other too
 * (an answer can show it), each until this window refuted it more often than it held.
 */
export function guessesOf(f: Pick<Frontier, 'prefer' | 'confirmed' | 'refuted'>): Order[] {
  const hinted: Order[] = f.prefer === 'oldest' ? ['oldest', 'newest'] : ['newest', 'oldest'];
  // This window's own record outranks the hint from others.
  const score = (d: Order) => f.confirmed[d] - f.refuted[d];
  const order = [...hinted].sort((a, b) => score(b) - score(a));
  const open = order.filter((d) => f.refuted[d] < MAX_REFUTATIONS || f.confirmed[d] >= f.refuted[d]);
  // A hint of no order: guesses start only from what this window's own answers confirm.
  return f.prefer === 'none' ? open.filter((d) => f.confirmed[d] > f.refuted[d]) : open;
}

/** What the frontier's chunks are sized for now: its sizing cap, and its recounts for stored events. */
const frontierFit = (f: Frontier): Fit => fitOf(sizingCap(f.cap), f.recount, f.learnedShare);

export function sizingOf(f: Frontier): Sizing {
  const guesses = guessesOf(f);
  // The window's own record backs its first guess as much as other windows' can.
  const backed = (f.hintBacked && guesses[0] === f.prefer) || (guesses[0] !== undefined && f.confirmed[guesses[0]] > 0);
  return { ...frontierFit(f), guesses, backed, nearby: f.nearby };
}

interface Work {
  f: Frontier;
  learned: Step['learned'];
  notes: string[];
}

/** Kept merged: overlapping crowded regions (split points overlap by a second) are one interval. */
function unresolved(w: Work, region: Region): void {
  const touching = w.f.unresolved.filter((r) => r.lo < region.hi && region.lo < r.hi);
  const merged = touching.reduce((m, r) => ({ lo: Math.min(m.lo, r.lo), hi: Math.max(m.hi, r.hi) }), region);
  w.f = { ...w.f, unresolved: [...w.f.unresolved.filter((r) => !touching.includes(r)), merged] };
}

/**
 * More than a cap of events in a stretch too short to cut by time: cut it by place, or give it up.
 * It takes a second either side with it, so that a neighbouring lane's chunk ending inside it is
 * not cut again; walks are trimmed off it (`trimPlaced`).
 */
function crowded(w: Work, region: Region): Task[] {
  if (w.f.placed.some((p) => p.lo <= region.lo && region.hi <= p.hi)) return [];
  const wider = { lo: region.lo - SECOND_MS, hi: region.hi + SECOND_MS };
  w.f = { ...w.f, placed: [...w.f.placed, wider] };
  w.notes.push(`more than ${w.f.cap.floor} events in ${regionText(region)}: cut by place`);
  // Cutting by place pays only against a cap worth the name; below it the region stays unresolved.
  if (w.f.circleCuts && w.f.cap.floor >= MIN_CAP_FOR_CIRCLES)
    return sphereCover().map((circle) => ({ kind: 'scan' as const, region: wider, circle, held: null }));
  unresolved(w, wider);
  return [];
}

/** A walk whose end lies inside a crowded region already cut by place starts past it (a second of overlap kept). */
function trimPlaced(f: Frontier): Task[] {
  const fit = frontierFit(f);
  return f.tasks.flatMap((t): Task[] => {
    if (t.kind !== 'walk' || t.held !== null) return [t];
    let r = t.region;
    for (const p of f.placed) {
      if (r.hi > p.lo + SECOND_MS && r.hi <= p.hi) r = { lo: r.lo, hi: p.lo + SECOND_MS };
      if (r.lo >= p.lo && r.lo < p.hi - SECOND_MS) r = { lo: p.hi - SECOND_MS, hi: r.hi };
    }
    if (r.lo === t.region.lo && r.hi === t.region.hi) return [t];
    return r.hi - r.lo >= 2 * SECOND_MS ? [startWalk(r, t.from, fit, t.rate, null, leftOver(t.stored, r))] : [];
  });
}

/** A task that would ask a malformed region is a bug here: fail loudly rather than prove an empty answer. */
function checkTask(t: Task): void {
  if (t.kind === 'probe') return;
  const q = t.kind === 'walk' ? walkQuery(t) : t.region;
  const ok =
    Number.isSafeInteger(q.lo) &&
    Number.isSafeInteger(q.hi) &&
    q.lo < q.hi &&
    q.lo >= t.region.lo &&
    q.hi <= t.region.hi;
  if (!ok)
    throw new Error(`truncation planner: malformed ${t.kind} query ${q.lo}..${q.hi} in ${t.region.lo}..${t.region.hi}`);
}

function onScan(w: Work, task: ScanTask, size: number, full: boolean): Task[] {
  if (!full) {
    w.f = { ...w.f, eventsProven: w.f.eventsProven + size };
    return [];
  }
  const cuts = circleCuts(task.circle);
  if (cuts.length === 0) unresolved(w, task.region);
  return cuts.map((circle) => ({ kind: 'scan' as const, region: task.region, circle, held: null }));
}

/**
 * Stretches of the stream's own query this read's probes found holding a cap of events or more (a
 * filtered stream's probes ask without its filters, so say nothing of its events).
 */
function probedFull(c: Cap): Region[] {
  if (!c.unfiltered) return [];
  return askedProbes(c).flatMap(({ region, size }) => (isFull(size, c.floor) ? [region] : []));
}

function onWalk(w: Work, task: WalkTask, events: readonly SeenEvent[], full: boolean): Task[] {
  const recount = full ? null : recountOf(task, events);
  if (recount)
    w.f = {
      ...w.f,
      recount: { stored: w.f.recount.stored + recount.stored, added: w.f.recount.added + recount.added },
    };
  const step = stepWalk(task, events, full, sizingOf(w.f), probedFull(w.f.cap));
  const chunk = walkQuery(task);
  w.f = {
    ...w.f,
    eventsProven: w.f.eventsProven + step.proven,
    provenMs: w.f.provenMs + (full ? 0 : chunk.hi - chunk.lo),
  };
  if (step.guess) {
    const { order, held } = step.guess;
    if (held) w.learned.confirmed.push(order);
    else w.learned.refuted.push(order);
    const tally = held ? 'confirmed' : 'refuted';
    w.f = { ...w.f, [tally]: { ...w.f[tally], [order]: w.f[tally][order] + 1 } };
    if (!held)
      w.notes.push(`${order}-first guess failed in ${regionText(walkQuery(task))}: the chunk is asked again smaller`);
  }
  return step.crowded ? [...step.next, ...crowded(w, step.crowded)] : step.next;
}

function seen(a: AnswersSeen, size: number, full: boolean): AnswersSeen {
  return {
    full: a.full + (full ? 1 : 0),
    proofs: a.proofs + (full ? 0 : 1),
    largest: Math.max(a.largest, size),
    recent: [...a.recent, size].slice(-RECENT_ANSWERS),
  };
}

/** Applies an answer to its task (at index `at`), the cap floor already counting it; returns the tasks put in its place. */
function apply(w: Work, at: number, task: WalkTask | ScanTask, events: readonly SeenEvent[]): number {
  const unique = mergeEvents(events);
  // The cap counts the rows the gateway sent: 200 rows holding a duplicate are as full as 200 events.
  const full = isFull(events.length, w.f.cap.floor);
  w.f = { ...w.f, answers: seen(w.f.answers, events.length, full) };
  const replaced = task.kind === 'scan' ? onScan(w, task, unique.length, full) : onWalk(w, task, unique, full);
  w.f = { ...w.f, tasks: [...w.f.tasks.slice(0, at), ...replaced, ...w.f.tasks.slice(at + 1)] };
  return replaced.length;
}

const probeTask = (f: Frontier): Task => ({ kind: 'probe', region: nextProbeRegion(f.cap) });
const waiting = (t: Task): boolean => t.kind !== 'probe' && t.held !== null;

/**
 * Held answers no longer in question (a probe answered, or facts shared meanwhile) are applied
 * now; the probe is asked while any answer still waits for it, and dropped when none does.
 */
function settleHeld(w: Work): void {
  for (let at = 0; at < w.f.tasks.length;) {
    const t = w.f.tasks[at]!;
    if (t.kind === 'probe' || t.held === null || inQuestion(w.f.cap, t.held.events.length)) at++;
    else at += apply(w, at, { ...t, held: null }, t.held.events);
  }
  const probe = w.f.tasks.some((t) => t.kind === 'probe');
  const wait = w.f.tasks.some(waiting);
  if (wait && !probe) w.f = { ...w.f, tasks: [probeTask(w.f), ...w.f.tasks] };
  if (!wait && probe) w.f = { ...w.f, tasks: w.f.tasks.filter((t) => t.kind !== 'probe') };
}

/** Holds the answer on its task until the probe answers. */
function hold(w: Work, at: number, task: WalkTask | ScanTask, events: readonly SeenEvent[]): void {
  const held: Task = { ...task, held: { events: events.map((e) => ({ id: e.id, timeMs: e.timeMs })) } };
  w.f = { ...w.f, tasks: [...w.f.tasks.slice(0, at), held, ...w.f.tasks.slice(at + 1)] };
  w.notes.push(`an answer of ${events.length} events waits for the cap probe (${capText(w.f.cap)})`);
  settleHeld(w);
}

function failureOf(f: Frontier, notes: readonly string[]): string | null {
  const ceiling = callCeiling(f.eventsProven, f.cap.floor, f.window);
  const runCalls = f.calls - f.circleCalls - f.callsBeforeRun;
  if (runCalls <= ceiling || f.tasks.length === 0) return null;
  const a = f.answers;
  return (
    `${runCalls} calls in this run for ${f.eventsProven} events proven (ceiling ${ceiling}): ` +
    `${a.full} answers full and ${a.proofs} below the cap, the last of ${a.recent.join(', ')} events ` +
    `(largest ${a.largest}); ${capText(f.cap)}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}`
  );
}

/**
 * Advances the window with the answer to the task `key` (default: the first askable one). An
 * answer to a task no longer there changes nothing but the call count and the cap floor: its
 * events are stored by the caller all the same, and the task that replaced it asks again.
 */
export function advance(frontier: Frontier, answer: Answer, key: string | null = null): Step {
  const at = key === null ? frontier.tasks.findIndex(askable) : frontier.tasks.findIndex((t) => taskKey(t) === key);
  const task = frontier.tasks[at];
  if (!task && key === null) throw new Error('advance() called on a finished frontier');
  const size = answer.events.length;
  const probe = task?.kind === 'probe' || key === 'probe';
  const asked: ProbeAnswer | null = probe ? { region: nextProbeRegion(frontier.cap), events: answer.events } : null;
  let cap = asked ? overflows(frontier, afterProbe(frontier.cap, size), asked) : afterAnswer(frontier.cap, size);
  const before = cap;
  if (task?.kind === 'walk') cap = measuredByRepeat(cap, task.fullAnswers > 0 ? task.sample : null, answer.events);
  const repeated = cap !== before;
  if (task?.kind === 'walk' && inQuestion(cap, size))
    cap = answerAsProbe(
      cap,
      size,
      walkQuery(task),
      answer.events.map((e) => e.timeMs),
      holdsStored(task, answer.events),
    );
  const questioned = !probe && task !== undefined && inQuestion(cap, size);
  const w: Work = {
    f: {
      ...frontier,
      cap,
      calls: frontier.calls + 1,
      circleCalls: frontier.circleCalls + (task?.kind === 'scan' ? 1 : 0),
    },
    learned: { answerSize: size, measured: probe || repeated ? cap.measured : null, confirmed: [], refuted: [] },
    notes: [],
  };
  if (probe) {
    w.f = { ...w.f, tasks: w.f.tasks.filter((t) => t.kind !== 'probe') };
    settleHeld(w);
    w.notes.push(`cap probe: ${size} events (${capText(w.f.cap)})`);
  } else if (task) {
    if (questioned) hold(w, at, task, answer.events);
    else apply(w, at, task, answer.events);
    if (repeated) {
      settleHeld(w);
      w.notes.push(`an answer held events a full one lacked: ${capText(w.f.cap)}`);
    }
  }
  const f = { ...w.f, tasks: trimPlaced(w.f) };
  f.tasks.forEach(checkTask);
  return {
    frontier: f,
    full: isFull(size, cap.floor),
    held: questioned,
    learned: w.learned,
    notes: w.notes,
    finished: f.tasks.length === 0,
    failure: failureOf(f, w.notes),
  };
}

/** A probe's answer: where it asked, and what it held. */
interface ProbeAnswer {
  region: Region;
  events: readonly SeenEvent[];
}

/** The cap after a probe inside a held answer's query: measured when it holds an event that answer lacks. */
function overflows(f: Frontier, cap: Cap, probe: ProbeAnswer): Cap {
  return f.tasks.reduce((c, t) => {
    if (t.kind !== 'walk' || t.held === null) return c;
    const held = { query: walkQuery(t), size: t.held.events.length, ids: new Set(t.held.events.map((e) => e.id)) };
    return measuredByOverflow(c, held, probe.region, probe.events);
  }, cap);
}

/**
 * What other reads learned meanwhile (cap facts shared within the TTL) applied to a read in
 * progress: a higher floor or a larger probe may settle held answers without a probe of its own.
 */
export function learnShared(frontier: Frontier, shared: SharedCap): Frontier {
  const w: Work = {
    f: { ...frontier, cap: withShared(frontier.cap, shared) },
    learned: { answerSize: 0, measured: null, confirmed: [], refuted: [] },
    notes: [],
  };
  settleHeld(w);
  return { ...w.f, tasks: trimPlaced(w.f) };
}

/** A saved read taken up by a new run (knowledge.ts `resumeFrontier`), its held answers settled by what is now known. */
export function resumeRead(f: Frontier, k: WindowKnowledge, nowMs: number, ttlMs: number): Frontier {
  const resumed = resumeFrontier(f, k, nowMs, ttlMs);
  return learnShared(resumed, { floor: resumed.cap.floor, measured: resumed.cap.measured });
}
