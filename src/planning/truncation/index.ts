/**
 * Truncation follow-up, pure: from one window's answers, the next query, until every instant of
 * the window is covered by an answer that proves it complete or by a chain claim whose evidence
 * keeps the chance of a wrong completion within WRONG_COMPLETION_BUDGET (see README "Nothing lost").
 *
 * An answer is complete when it holds fewer events than the gateway's cap is known to allow
 * (`capFloor`: the largest answer seen). Otherwise it is saturated, and the window goes on:
 * by chains (newest- or oldest-first, checked at every step), by walks (no hypothesis: chunks
 * small enough to be complete), by circles (a crowded second), or it stays unresolved.
 */
import type { Circle } from '../../domain/filters.js';
import type { Interval } from '../../domain/interval.js';
import { SECOND_MS } from '../../domain/time.js';
import { checkChainStep, countPast, startChain } from './chain.js';
import { circleCuts, sphereCover } from './circles.js';
import { acceptClaims } from './evidence.js';
import {
  MAX_REFUTATIONS,
  canSplit,
  clampCut,
  knownIn,
  mergeEvents,
  surelyIn,
  windowRegion,
  type Answer,
  type Claim,
  type Direction,
  type Frontier,
  type OrderPreference,
  type Region,
  type SeenEvent,
  type Task,
  type TaskKind,
} from './frontier.js';
import { afterWalk, startWalk, walkQuery } from './walk.js';

export * from './frontier.js';
export { claimBound, falseClaimBound } from './evidence.js';
export { LANE_MIN_CALLS, expectedEvents, splitForLanes } from './lanes.js';

export interface WindowKnowledge {
  /** Largest answer this gateway is known to have returned lately (1 when nothing is known). */
  capFloor: number;
  /** A hint from other windows: which hypothesis to try first. Never evidence. */
  prefer: OrderPreference;
  circleCuts: boolean;
}

type Tally = { confirmed: number; refuted: number };

const MIN_CAP_FOR_CIRCLES = 10;

/**
 * The hint from earlier windows: a direction is tried first while it held at least as often as it
 * failed; a gateway that kept neither order is walked.
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
export function initialFrontier(window: Interval, k: WindowKnowledge, regions: Region[] = [windowRegion(window)], startedAtMs = 0): Frontier {
  return {
    startedAtMs,
    scope: regions,
    window,
    capFloor: Math.max(1, k.capFloor),
    prefer: k.prefer,
    circleCuts: k.circleCuts,
    refuted: { newest: 0, oldest: 0 },
    confirmed: { newest: 0, oldest: 0 },
    nextClaim: 1,
    claims: [],
    tasks: regions.map((region) => ({ kind: 'scan', region, known: [], circle: null })),
    unresolved: [],
    placed: [],
    riskSpent: 0,
    calls: 0,
    circleCalls: 0,
    eventsSeen: 0,
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
 * whatever was applied meanwhile. A task changed meanwhile (trimmed off a crowded region) has a
 * new key, and an answer to the old one only adds its events.
 */
export function taskKey(t: Task): string {
  if (t.kind === 'scan') return `scan:${t.region.lo}:${t.region.hi}:${t.circle ? `${t.circle.latitude},${t.circle.longitude},${t.circle.radiusKm}` : ''}`;
  if (t.kind === 'walk') return `walk:${t.region.lo}:${t.region.hi}:${t.cut ?? ''}`;
  if (t.kind === 'chain') return `chain:${t.claim}:${t.region.lo}:${t.region.hi}`;
  return `verify:${t.claim}:${t.region.lo}:${t.region.hi}`;
}

function queryOf(task: Task): Query {
  if (task.kind === 'walk') return { region: walkQuery(task), circle: null, purpose: 'walk' };
  const circle = task.kind === 'scan' && task.circle ? { latitude: task.circle.latitude, longitude: task.circle.longitude, radiusKm: task.circle.radiusKm } : null;
  return { region: task.region, circle, purpose: task.kind };
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
  /** Contradictions between answers, for the log. */
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

interface Work {
  f: Frontier;
  tasks: Task[];
  learned: Step['learned'];
  notes: string[];
}

function pickDirection(f: Frontier): Direction | null {
  const order: Direction[] = f.prefer === 'oldest' ? ['oldest', 'newest'] : f.prefer === 'newest' ? ['newest', 'oldest'] : [];
  // Within the window, a direction refuted less often goes first; the hint only breaks ties.
  const open = order.filter((d) => f.refuted[d] < MAX_REFUTATIONS).sort((a, b) => f.refuted[a] - f.refuted[b]);
  return open[0] ?? null;
}

/** A saturated answer to `region`: try a chain, else walk; a region too short to split is cut by circles. */
/**
 * More than a cap of events in a region too short to split by time: cut it by place, or give it
 * up. It takes the seconds either side with it, and other tasks are trimmed off it (see `trimPlaced`): with
 * whole-second ends the next region would overlap it by a second, and the crowded second would be
 * cut by circles twice.
 */
function crowded(w: Work, region: Region, known: readonly SeenEvent[]): void {
  if (w.f.placed.some((p) => p.lo <= region.lo && region.hi <= p.hi)) return;
  // A second either side: a neighbouring chunk asked at the same time (lanes) falls inside it and is not cut again.
  const wider = { lo: region.lo - SECOND_MS, hi: Math.min(region.hi + SECOND_MS, w.f.tasks.length === 0 ? region.hi : region.hi + SECOND_MS) };
  w.f = { ...w.f, placed: [...w.f.placed, wider] };
  // Cutting by place pays only against a cap worth the name; below it the region stays unresolved.
  if (w.f.circleCuts && w.f.capFloor >= MIN_CAP_FOR_CIRCLES) w.tasks.push(...sphereCover().map((circle) => ({ kind: 'scan' as const, region: wider, known: knownIn(known, wider), circle })));
  else unresolved(w, wider);
}

/** Tasks starting inside a crowded region already handed to circles start past it (a second of overlap kept). */
function trimPlaced(tasks: Task[], placed: readonly Region[]): Task[] {
  return tasks.flatMap((t): Task[] => {
    if ((t.kind !== 'walk' && t.kind !== 'scan') || (t.kind === 'scan' && t.circle)) return [t];
    const p = placed.find((r) => t.region.lo >= r.lo && t.region.lo < r.hi - SECOND_MS);
    if (!p) return [t];
    if (t.region.hi <= p.hi) return [];
    const region = { lo: p.hi - SECOND_MS, hi: t.region.hi };
    return [t.kind === 'walk' ? { ...t, region, cut: t.cut !== null && t.cut > region.lo + SECOND_MS ? t.cut : null } : { ...t, region }];
  });
}

function afterSaturated(w: Work, region: Region, events: readonly SeenEvent[], known: readonly SeenEvent[], go: { dir: Direction; chain: number } | null = null): void {
  const all = mergeEvents(events, known);
  if (!canSplit(region)) return crowded(w, region, all);
  const dir = go?.dir ?? pickDirection(w.f);
  const start = dir ? startChain(dir, events, region, known, { eventsSeen: w.f.eventsSeen, nextClaim: w.f.nextClaim, chain: go?.chain ?? null }) : null;
  if (start === 'inconsistent') {
    w.learned.refuted.push(dir!);
    w.notes.push(`${dir}-first refuted in ${regionText(region)}: the answer lacks events seen before`);
    w.f = { ...w.f, refuted: { ...w.f.refuted, [dir!]: w.f.refuted[dir!] + 1 } };
    afterSaturated(w, region, events, known);
    return;
  }
  if (start) {
    w.f = { ...w.f, nextClaim: w.f.nextClaim + 1, claims: [...w.f.claims, start.claim] };
    w.tasks.push(start.next);
    return;
  }
  const walk = startWalk(region, all, 2 * events.length, w.f.capFloor);
  // A saturated region is never asked whole again: without a better cut, halve it.
  w.tasks.push(walk.cut === null ? { ...walk, cut: clampCut(region, (region.lo + region.hi) / 2) } : walk);
}

/** Kept merged: overlapping crowded regions (split points overlap by a second) are one interval. */
function unresolved(w: Work, region: Region): void {
  const touching = w.f.unresolved.filter((r) => r.lo < region.hi && region.lo < r.hi);
  const merged = touching.reduce((m, r) => ({ lo: Math.min(m.lo, r.lo), hi: Math.max(m.hi, r.hi) }), region);
  w.f = { ...w.f, unresolved: [...w.f.unresolved.filter((r) => !touching.includes(r)), merged] };
}

function refute(w: Work, dir: Direction, claim: Claim, why: string): void {
  w.learned.refuted.push(dir);
  w.notes.push(`${dir}-first refuted in ${regionText(claim.query)}: the answer ${why}`);
  w.f = { ...w.f, refuted: { ...w.f.refuted, [dir]: w.f.refuted[dir] + 1 }, claims: w.f.claims.filter((c) => c.id !== claim.id) };
}

function regionText(r: Region): string {
  return `${new Date(r.lo).toISOString()}..${new Date(r.hi).toISOString()}`;
}

function onScan(w: Work, task: Extract<Task, { kind: 'scan' }>, events: SeenEvent[], saturated: boolean): void {
  if (!saturated) return;
  if (task.circle) {
    const cuts = circleCuts(task.circle);
    if (cuts.length === 0) unresolved(w, task.region);
    else w.tasks.push(...cuts.map((circle) => ({ kind: 'scan' as const, region: task.region, known: task.known, circle })));
    return;
  }
  afterSaturated(w, task.region, events, task.known);
}

function onChain(w: Work, task: Extract<Task, { kind: 'chain' }>, events: SeenEvent[], fresh: SeenEvent[], saturated: boolean): void {
  const claim = w.f.claims.find((c) => c.id === task.claim)!;
  const check = checkChainStep(task, claim, events, saturated);
  if (!check.consistent) {
    refute(w, task.dir, claim, check.reason);
    if (saturated) afterSaturated(w, task.region, events, task.known);
    // The claim vouches for nothing now: the rest of its query is read anew (as a claim to verify
    // when only this answer broke the hypothesis, so that a second contradiction counts too).
    const rest = beyond(claim.query, task.region, task.dir);
    if (check.failed === 'lacking') {
      w.f = { ...w.f, claims: [...w.f.claims, { ...claim, region: rest, status: 'verifying' }] };
      w.tasks.push({ kind: 'verify', claim: claim.id, region: rest, known: knownIn(mergeEvents(task.known, events), rest) });
      return;
    }
    w.tasks.push({ kind: 'scan', region: rest, known: knownIn(mergeEvents(task.known, events), rest), circle: null });
    return;
  }
  w.learned.confirmed.push(task.dir);
  w.f = {
    ...w.f,
    confirmed: { ...w.f.confirmed, [task.dir]: w.f.confirmed[task.dir] + 1 },
    claims: w.f.claims.map((c) =>
      c.id === claim.id
        ? { ...c, checked: check.checked, status: 'checked' as const, known: c.known + countIn(fresh, c.query), below: c.below + countPast(c, fresh), zone: { ...c.zone, ids: [] } }
        : c.chain === claim.chain
          ? { ...c, known: c.known + countIn(fresh, c.query), below: c.below + countPast(c, fresh) }
          : c,
    ),
  };
  if (saturated) afterSaturated(w, task.region, events, task.known, { dir: task.dir, chain: claim.chain });
  // A finished chain is judged at once: a claim too weak to accept is re-read now, and a wrong
  // hypothesis shows before more of the window is spent on it.
  else settleClaims(w, (c) => c.chain === claim.chain);
}

/** The part of a chain query above (newest) or below (oldest) the next step's region, a second of overlap kept. */
function beyond(query: Region, step: Region, dir: Direction): Region {
  return dir === 'newest' ? { lo: step.hi - SECOND_MS, hi: query.hi } : { lo: query.lo, hi: step.lo + SECOND_MS };
}

const countIn = (events: readonly SeenEvent[], r: Region): number => events.filter((e) => surelyIn(e, r)).length;

function onVerify(w: Work, task: Extract<Task, { kind: 'verify' }>, events: SeenEvent[], saturated: boolean): void {
  const claim = w.f.claims.find((c) => c.id === task.claim)!;
  w.f = { ...w.f, claims: w.f.claims.filter((c) => c.id !== claim.id) };
  if (!saturated) return;
  refute(w, claim.dir, claim, `re-read holds ${events.length} events where ${claim.size - claim.checked} were claimed`);
  afterSaturated(w, task.region, events, task.known);
}

/** A saturated chunk is another chance for a chain, while the gateway keeps one order often enough. */
function onWalk(w: Work, task: Extract<Task, { kind: 'walk' }>, events: SeenEvent[], saturated: boolean): void {
  const after = afterWalk(task, events, saturated, w.f.capFloor);
  if (after.saturated) {
    const { chunk, again } = after.saturated;
    if (again === null) crowded(w, chunk, mergeEvents(events, task.known));
    else if (pickDirection(w.f) === null) w.tasks.push(again);
    else afterSaturated(w, chunk, events, task.known);
  }
  w.tasks.push(...after.rest);
}

/** Claims are accepted while the window's budget lasts; the rest are re-read. */
function settleClaims(w: Work, which: (c: Claim) => boolean = () => true): void {
  const pending = w.f.claims.filter((c) => c.status !== 'verifying' && which(c));
  if (pending.length === 0) return;
  const { rejected, riskSpent } = acceptClaims(pending, w.f.riskSpent);
  const verify = new Set(rejected.map((c) => c.id));
  w.f = {
    ...w.f,
    riskSpent,
    claims: w.f.claims
      .filter((c) => c.status === 'verifying' || verify.has(c.id) || !pending.includes(c))
      .map((c) => (verify.has(c.id) ? { ...c, status: 'verifying' as const } : c)),
  };
  w.tasks.unshift(...rejected.map((c) => ({ kind: 'verify' as const, claim: c.id, region: c.region, known: [] })));
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
  const events = mergeEvents(answer.events);
  // The cap counts the rows the gateway sent: 200 rows holding a duplicate are as full as 200 events.
  const size = answer.events.length;
  const saturated = size > 0 && size >= frontier.capFloor;
  const learned = { answerSize: size, confirmed: [], refuted: [] };
  if (!task) {
    const f = { ...frontier, calls: frontier.calls + 1 };
    return { frontier: f, saturated, learned, notes: [], finished: f.tasks.length === 0, failure: null };
  }
  const rest = frontier.tasks.filter((_, i) => i !== at);
  const knownIds = new Set(task.known.map((e) => e.id));
  const fresh = events.filter((e) => !knownIds.has(e.id));
  const w: Work = {
    f: {
      ...frontier,
      capFloor: Math.max(frontier.capFloor, size),
      calls: frontier.calls + 1,
      circleCalls: frontier.circleCalls + (task.kind === 'scan' && task.circle ? 1 : 0),
      eventsSeen: frontier.eventsSeen + fresh.length,
    },
    tasks: [],
    learned,
    notes: [],
  };
  if (task.kind === 'scan') onScan(w, task, events, saturated);
  else if (task.kind === 'chain') onChain(w, task, events, fresh, saturated);
  else if (task.kind === 'verify') onVerify(w, task, events, saturated);
  else onWalk(w, task, events, saturated);
  // Tasks still to come learn this answer's events, so that their own answers count only new ones.
  w.tasks.push(...rest.map((t) => ({ ...t, known: mergeEvents(t.known, knownIn(events, t.region)) })));
  w.tasks = trimPlaced(w.tasks, w.f.placed);
  if (w.tasks.length === 0) settleClaims(w);
  const f = { ...w.f, tasks: w.tasks };
  const ceiling = callCeiling(f.eventsSeen, f.capFloor, f.window);
  const failure =
    f.calls - f.circleCalls > ceiling && f.tasks.length > 0
      ? `${f.calls - f.circleCalls} calls for ${f.eventsSeen} events (ceiling ${ceiling}): the gateway's answers keep contradicting each other (${w.notes.join('; ') || 'answers of ' + events.length + ' events'})`
      : null;
  return { frontier: f, saturated, learned: w.learned, notes: w.notes, finished: f.tasks.length === 0, failure };
}
