/**
 * Truncation follow-up, pure: from one window's answers, the next queries, until every instant of
 * the window is covered by an answer that proves it complete (see docs/design.md, "Nothing lost").
 *
 * The rule: a part of the window is complete only when an answer whose query covers it holds
 * fewer events than the gateway's cap (`capFloor`: the largest answer seen). A full answer proves
 * nothing, whatever order the gateway keeps; its events are stored and size the next query. The
 * window is covered by walks (chunks sized to come back below the cap), and a stretch too short
 * to cut by time that still comes back full is cut by place (circles) or left unresolved.
 */
import type { Circle } from '../../domain/filters.js';
import type { Interval } from '../../domain/interval.js';
import { SECOND_MS } from '../../domain/time.js';
import { circleCuts, sphereCover } from './circles.js';
import {
  mergeEvents,
  queryableRegions,
  type Answer,
  type Direction,
  type Frontier,
  type OrderPreference,
  type Rate,
  type Region,
  type Sample,
  type Task,
  type TaskKind,
  type WalkTask,
} from './frontier.js';
import { startWalk, stepWalk, walkQuery } from './walk.js';

export * from './frontier.js';
export { LANE_MIN_CALLS, expectedEvents, splitForLanes } from './lanes.js';
export { FILL, STORED_FILL, walkQuery } from './walk.js';

export interface WindowKnowledge {
  /** Largest answer this gateway is known to have returned lately (1 when nothing is known). */
  capFloor: number;
  /** A hint from other windows: which order to guess first. Never evidence. */
  prefer: OrderPreference;
  circleCuts: boolean;
  /** Events per ms near the window (stored neighbours), so the first query need not ask it whole. */
  rate?: Rate | null;
  /** Times of events stored by an earlier read of this window, each standing for `perPoint` events. */
  stored?: { points: number[]; perPoint: number } | null;
}

type Tally = { confirmed: number; refuted: number };

/** A gateway that refuted a guess this often in a window is read without it there. */
export const MAX_REFUTATIONS = 2;
const MIN_CAP_FOR_CIRCLES = 10;

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
  return 'walk';
}

/** `regions`: a re-run of a partial window asks only what was left unresolved. */
export function initialFrontier(
  window: Interval,
  k: WindowKnowledge,
  regions: Region[] = queryableRegions(window),
  startedAtMs = 0,
): Frontier {
  const capFloor = Math.max(1, k.capFloor);
  const dir = k.prefer === 'oldest' ? 'up' : 'down';
  const stored = (r: Region): Sample | null => {
    const points = (k.stored?.points ?? []).filter((t) => t > r.lo && t < r.hi);
    return points.length > 0 ? { trust: 'stored', points, ids: [], perPoint: k.stored!.perPoint } : null;
  };
  return {
    version: 2,
    startedAtMs,
    scope: regions,
    window,
    capFloor,
    prefer: k.prefer,
    circleCuts: k.circleCuts,
    refuted: { newest: 0, oldest: 0 },
    confirmed: { newest: 0, oldest: 0 },
    tasks: regions.map((region) => startWalk(region, dir, capFloor, k.rate ?? null, stored(region))),
    unresolved: [],
    placed: [],
    calls: 0,
    circleCalls: 0,
    eventsSeen: 0,
    provenMs: 0,
  };
}

export interface Query {
  region: Region;
  /** Replaces the stream's (absent) circle: a crowded second cut by place. */
  circle: Circle | null;
  purpose: TaskKind;
}

/**
 * A task's identity while its query is in flight: the answer is applied to the task with this key,
 * whatever was applied meanwhile. A task changed meanwhile has a new key, and an answer to the old
 * one only counts as a call (its events are stored all the same).
 */
export function taskKey(t: Task): string {
  if (t.kind === 'scan')
    return `scan:${t.region.lo}:${t.region.hi}:${t.circle.latitude},${t.circle.longitude},${t.circle.radiusKm}`;
  return `walk:${t.dir}:${t.region.lo}:${t.region.hi}:${t.reach ?? ''}`;
}

function queryOf(task: Task): Query {
  if (task.kind === 'walk') return { region: walkQuery(task), circle: null, purpose: 'walk' };
  const { latitude, longitude, radiusKm } = task.circle;
  return { region: task.region, circle: { latitude, longitude, radiusKm }, purpose: 'scan' };
}

export function nextQuery(f: Frontier): Query | null {
  const task = f.tasks[0];
  return task ? queryOf(task) : null;
}

/**
 * Up to `max` queries that may be asked at once, in task order, skipping tasks already in flight
 * (`busy` keys). Each answer is applied with `advance(frontier, answer, key)` in any order.
 */
export function nextQueries(f: Frontier, busy: ReadonlySet<string>, max: number): Array<{ key: string; query: Query }> {
  const out: Array<{ key: string; query: Query }> = [];
  for (const task of f.tasks) {
    if (out.length >= max) break;
    const key = taskKey(task);
    if (!busy.has(key) && !out.some((q) => q.key === key)) out.push({ key, query: queryOf(task) });
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
  /** The answer may be truncated (it is as large as the largest answer known). */
  saturated: boolean;
  learned: { answerSize: number; confirmed: Direction[]; refuted: Direction[] };
  /** What the answer changed in the plan, for the log. */
  notes: string[];
  /** No task is left: the window is done, or partial when `unresolved` is not empty. */
  finished: boolean;
  /** The window spent far more calls than its answers show it needs: stop and say why. */
  failure: string | null;
}

/** Calls a window may spend: a multiple of what its own answers show it needs, plus a constant. */
export function callCeiling(eventsSeen: number, capFloor: number, window: Interval): number {
  // Searching a window for one crowded second takes about log2(seconds) calls however few events it holds.
  const search = Math.ceil(Math.log2(Math.max(2, (window.endMs - window.startMs) / SECOND_MS)));
  return 6 * Math.ceil(eventsSeen / capFloor) + 3 * search + 20;
}

/**
 * The orders still worth guessing in this window, likeliest first: the hint first, the other too
 * (an answer can show it), each until this window refuted it more often than it held.
 */
export function guessesOf(f: Frontier): Direction[] {
  const hinted: Direction[] = f.prefer === 'oldest' ? ['oldest', 'newest'] : ['newest', 'oldest'];
  // This window's own record outranks the hint from others.
  const score = (d: Direction) => f.confirmed[d] - f.refuted[d];
  const order = [...hinted].sort((a, b) => score(b) - score(a));
  const open = order.filter((d) => f.refuted[d] < MAX_REFUTATIONS || f.confirmed[d] >= f.refuted[d]);
  // A hint of no order: guesses start only from what this window's own answers confirm.
  return f.prefer === 'walk' ? open.filter((d) => f.confirmed[d] > f.refuted[d]) : open;
}

interface Work {
  f: Frontier;
  tasks: Task[];
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
function crowded(w: Work, region: Region): void {
  if (w.f.placed.some((p) => p.lo <= region.lo && region.hi <= p.hi)) return;
  const wider = { lo: region.lo - SECOND_MS, hi: region.hi + SECOND_MS };
  w.f = { ...w.f, placed: [...w.f.placed, wider] };
  w.notes.push(`more than ${w.f.capFloor} events in ${regionText(region)}: cut by place`);
  // Cutting by place pays only against a cap worth the name; below it the region stays unresolved.
  if (w.f.circleCuts && w.f.capFloor >= MIN_CAP_FOR_CIRCLES)
    w.tasks.push(...sphereCover().map((circle) => ({ kind: 'scan' as const, region: wider, circle })));
  else unresolved(w, wider);
}

/** A walk whose end lies inside a crowded region already cut by place starts past it (a second of overlap kept). */
function trimPlaced(tasks: Task[], placed: readonly Region[], cap: number): Task[] {
  return tasks.flatMap((t): Task[] => {
    if (t.kind !== 'walk') return [t];
    let r = t.region;
    for (const p of placed) {
      if (r.hi > p.lo + SECOND_MS && r.hi <= p.hi) r = { lo: r.lo, hi: p.lo + SECOND_MS };
      if (r.lo >= p.lo && r.lo < p.hi - SECOND_MS) r = { lo: p.hi - SECOND_MS, hi: r.hi };
    }
    if (r.lo === t.region.lo && r.hi === t.region.hi) return [t];
    return r.hi - r.lo >= 2 * SECOND_MS ? [startWalk(r, t.dir, cap, t.rate, null)] : [];
  });
}

/** A task that would ask a malformed region is a bug here: fail loudly rather than prove an empty answer. */
function checkTask(t: Task): void {
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

function regionText(r: Region): string {
  return `${new Date(r.lo).toISOString()}..${new Date(r.hi).toISOString()}`;
}

function onScan(w: Work, task: Extract<Task, { kind: 'scan' }>, size: number, saturated: boolean): void {
  if (!saturated) {
    w.f = { ...w.f, eventsSeen: w.f.eventsSeen + size };
    return;
  }
  const cuts = circleCuts(task.circle);
  if (cuts.length === 0) unresolved(w, task.region);
  else w.tasks.push(...cuts.map((circle) => ({ kind: 'scan' as const, region: task.region, circle })));
}

function onWalk(w: Work, task: WalkTask, events: Answer['events'], saturated: boolean): void {
  const step = stepWalk(task, events, saturated, w.f.capFloor, guessesOf(w.f));
  const chunk = walkQuery(task);
  w.f = {
    ...w.f,
    eventsSeen: w.f.eventsSeen + step.proven,
    provenMs: w.f.provenMs + (saturated ? 0 : chunk.hi - chunk.lo),
  };
  if (step.guess) {
    const { dir, held } = step.guess;
    if (held) w.learned.confirmed.push(dir);
    else w.learned.refuted.push(dir);
    const tally = held ? 'confirmed' : 'refuted';
    w.f = { ...w.f, [tally]: { ...w.f[tally], [dir]: w.f[tally][dir] + 1 } };
    if (!held)
      w.notes.push(`${dir}-first guess failed in ${regionText(walkQuery(task))}: the chunk is asked again smaller`);
  }
  if (step.next) w.tasks.push(step.next);
  if (step.crowded) crowded(w, step.crowded);
}

/**
 * Advances the window with the answer to the task `key` (default: the first, `nextQuery`). An
 * answer to a task no longer there changes nothing but the call count: its events are stored by
 * the caller all the same, and the task that replaced it asks again.
 */
export function advance(frontier: Frontier, answer: Answer, key: string | null = null): Step {
  const at = key === null ? 0 : frontier.tasks.findIndex((t) => taskKey(t) === key);
  const task = frontier.tasks[at];
  if (!task && key === null) throw new Error('advance() called on a finished frontier');
  // The cap counts the rows the gateway sent: 200 rows holding a duplicate are as full as 200 events.
  const size = answer.events.length;
  const saturated = size > 0 && size >= frontier.capFloor;
  const learned: Step['learned'] = { answerSize: size, confirmed: [], refuted: [] };
  if (!task) {
    const f = { ...frontier, calls: frontier.calls + 1 };
    return { frontier: f, saturated, learned, notes: [], finished: f.tasks.length === 0, failure: null };
  }
  const w: Work = {
    f: {
      ...frontier,
      capFloor: Math.max(frontier.capFloor, size),
      calls: frontier.calls + 1,
      circleCalls: frontier.circleCalls + (task.kind === 'scan' ? 1 : 0),
    },
    tasks: [],
    learned,
    notes: [],
  };
  const events = mergeEvents(answer.events);
  if (task.kind === 'scan') onScan(w, task, events.length, saturated);
  else onWalk(w, task, events, saturated);
  const tasks = [...frontier.tasks.slice(0, at), ...w.tasks, ...frontier.tasks.slice(at + 1)];
  const f = { ...w.f, tasks: trimPlaced(tasks, w.f.placed, w.f.capFloor) };
  f.tasks.forEach(checkTask);
  const ceiling = callCeiling(f.eventsSeen, f.capFloor, f.window);
  const failure =
    f.calls - f.circleCalls > ceiling && f.tasks.length > 0
      ? `${f.calls - f.circleCalls} calls for ${f.eventsSeen} events proven (ceiling ${ceiling}): ` +
        `the gateway's answers keep coming back full (${w.notes.join('; ') || 'answers of ' + size + ' events'})`
      : null;
  return { frontier: f, saturated, learned: w.learned, notes: w.notes, finished: f.tasks.length === 0, failure };
}
