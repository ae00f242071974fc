/**
 * What a window read knows before its first call, built in one place (`windowKnowledge`) from what
 * the database holds, and the first frontier it gives (`initialFrontier`) or what it changes in a
 * saved one (`resumeFrontier`). The rules between its parts:
 *
 * - **Cap** (cap.ts): proofs use the floor; chunks are sized for the sizing cap, which is
 *   max_results unless a probe measured less. A lapsed floor is 1, and sizes nothing.
 * - **Order hint**: which order to guess first; it only places queries.
 * - **Scope**: a first read covers the window less what other reads proved complete (their
 *   proofs stand, whatever their windows' boundaries); a refresh covers the whole window; a partial
 *   window read again covers the intervals it left unresolved.
 * - **Stored events** count only inside parts proven complete for this stream or for a wider one
 *   (one whose filters take in every event this stream asks for: its proof covers this stream's
 *   events too); elsewhere an empty stretch may be one never read. They size the chunks there. A
 *   part without them is asked whole first: an empty or quiet part then costs one call, and a
 *   dense one gives the sample its next chunk is sized from.
 * - **Nearby rate** (proven stretches near the window): sizes a chunk only after the window's own
 *   full answer, and only as far as that answer does not show the window less dense.
 * - **Resume**: a saved frontier keeps its proofs and its walks; its cap is relearned when older
 *   than the TTL, raised by what other reads learned meanwhile, and each run gets a call ceiling of
 *   its own. Walks not asking a chunk again after a full answer are placed anew for the sizing cap.
 */
import type { Interval } from '../../domain/interval.js';
import { covers } from '../../domain/proofs.js';
import { LIMITS } from '../../domain/spec.js';
import { DAY_MS, SECOND_MS, secondAfter } from '../../domain/time.js';
import { sizingCap, withShared, type Cap } from './cap.js';
import {
  FRONTIER_VERSION,
  queryablePieces,
  queryableRegions,
  regionAround,
  type Frontier,
  type Order,
  type OrderPreference,
  type Rate,
  type Recount,
  type Region,
  type Sample,
  type Task,
} from './frontier.js';
import { fitOf } from './fit.js';
import { spreadTimes, unitOf } from './units.js';
import { startWalk } from './place.js';

/** Points of stored events a window sizes its chunks from: at most this many, each standing for the events between. */
export const MAX_STORED_POINTS = 2000;

/** What every reader of this gateway shares (gateway_knowledge), the TTL already applied. */
export interface SharedFacts {
  /** The largest answer seen within the TTL; 1 when none. */
  capFloor: number;
  /** The cap as measured by probes within the TTL, or null. */
  measured: number | null;
  /** The cap as last measured, however long ago, or null. */
  measuredBefore: number | null;
  /** The region of the largest answer ever recorded (lapsed or not): where a probe finds many events. */
  capRegion: Region | null;
  prefer: OrderPreference;
  /** Other windows saw the hinted order hold. */
  hintBacked: boolean;
  /** Stored events earlier reads counted again within the TTL, and how many more their answers held; null when none. */
  recounted: Recount | null;
}

export type ReadKind = { kind: 'first' } | { kind: 'refresh' } | { kind: 'retry'; regions: Region[] };

export interface KnowledgeInputs {
  window: Interval;
  nowMs: number;
  read: ReadKind;
  facts: SharedFacts;
  /** With no order hint, guess newest-first anyway (the caller's dice: gateways change). */
  explore: boolean;
  /** The stream has no circle of its own. */
  circleCuts: boolean;
  /** The stream has no filters at all: its answers are what probes would give (cap.ts `answerAsProbe`). */
  unfiltered: boolean;
  /** The stream's coverage proofs, closed intervals of epoch ms: what a first read need not ask. */
  proofs: ReadonlyArray<{ lo: number; hi: number }>;
  /** Proofs of this stream and of wider ones: where its stored events are complete. */
  storedProofs: ReadonlyArray<{ lo: number; hi: number }>;
  /** Times of the stream's stored events (its own filters) within the window, sorted. */
  storedTimes: readonly number[];
  nearby: Rate | null;
}

export interface WindowKnowledge {
  cap: Cap;
  prefer: OrderPreference;
  hintBacked: boolean;
  circleCuts: boolean;
  /** Regions this read must prove, each queryable. */
  scope: Region[];
  /** The scope cut where proven parts begin and end: each piece with its stored events, or none (asked whole first). */
  pieces: Array<{ region: Region; stored: Sample | null }>;
  nearby: Rate | null;
  /** The share of new events earlier reads counted again: the prior of a re-read's fit, or null. */
  learnedShare: number | null;
}

/**
 * Earlier reads' recounts give a re-read its prior share of new events only once they counted this
 * many stored events: fewer say little of a catalog's change.
 */
export const MIN_LEARNED_RECOUNT = 1000;

/** The share of new events the recounts of earlier reads found, or null when they counted too few. */
export function learnedShareOf(r: Recount | null): number | null {
  if (r === null || r.stored < MIN_LEARNED_RECOUNT) return null;
  return Math.min(1, Math.max(0, r.added / r.stored));
}

const MONTH_MS = LIMITS.maxWindowDays * DAY_MS - SECOND_MS;

/**
 * Where cap probes ask, in turn: where the largest answer known was seen (an unfiltered query there
 * holds at least as many events), the month ending with the window, the month after it (as far as
 * it lies before now: `monthAfter`), and the month ending now (a real catalog's densest): a month of
 * the real catalog holds far more than a cap, but a window at the edge of the data may sit in a
 * sparse one.
 */
export function probeRegionsOf(window: Interval, capRegion: Region | null, nowMs: number): Region[] {
  const end = secondAfter(window.endMs);
  const now = secondAfter(nowMs);
  const candidates = [
    ...(capRegion ? [capRegion] : []),
    { lo: end - MONTH_MS, hi: end },
    monthAfter(end, nowMs >= window.endMs ? now : null),
    ...(nowMs > end + MONTH_MS ? [{ lo: now - MONTH_MS, hi: now }] : []),
  ];
  // A region inside another holds at most as many events: asked first it could only repeat an answer.
  const inside = (r: Region, o: Region) => o.lo <= r.lo && r.hi <= o.hi;
  return candidates.filter((r, i) => candidates.every((o, j) => j === i || !inside(r, o) || (inside(o, r) && j > i)));
}

/**
 * The month after a window ending at `end`, as far as it lies before `now` (null: no clock, as in a
 * simulation): what lies past now holds nothing yet. Less than a day of it left (a day of the real
 * catalog holds more than a cap), the month before the window's own month is asked instead: apart
 * from it, so that two probes of one size there still measure the cap.
 */
function monthAfter(end: number, now: number | null): Region {
  const after = { lo: end - SECOND_MS, hi: Math.min(end - SECOND_MS + MONTH_MS, now ?? Infinity) };
  if (after.hi - after.lo >= DAY_MS) return after;
  return { lo: end + SECOND_MS - 2 * MONTH_MS, hi: end + SECOND_MS - MONTH_MS };
}

/** Proven parts within [lo, hi], merged across gaps of at most a second (proofs understate by up to one). */
export function provenWithin(
  proofs: KnowledgeInputs['proofs'],
  lo: number,
  hi: number,
): Array<{ lo: number; hi: number }> {
  const sorted = [...proofs].filter((p) => p.hi >= lo && p.lo <= hi).sort((a, b) => a.lo - b.lo);
  const out: Array<{ lo: number; hi: number }> = [];
  for (const p of sorted) {
    const last = out.at(-1);
    if (last && p.lo <= last.hi + SECOND_MS) last.hi = Math.max(last.hi, p.hi);
    else out.push({ lo: Math.max(p.lo, lo), hi: Math.min(p.hi, hi) });
  }
  return out.map((p) => ({ lo: p.lo, hi: Math.min(p.hi, hi) }));
}

/** The closed stretches of [lo, hi] outside `parts` (merged, sorted). */
function gapsOf(
  parts: ReadonlyArray<{ lo: number; hi: number }>,
  lo: number,
  hi: number,
): Array<{ lo: number; hi: number }> {
  const out: Array<{ lo: number; hi: number }> = [];
  let cursor = lo;
  for (const p of parts) {
    if (p.lo > cursor) out.push({ lo: cursor, hi: p.lo });
    cursor = Math.max(cursor, p.hi);
  }
  if (cursor < hi) out.push({ lo: cursor, hi });
  return out;
}

const clip = (r: Region, within: Region): Region | null => {
  const c = { lo: Math.max(r.lo, within.lo), hi: Math.min(r.hi, within.hi) };
  return c.hi - c.lo >= 2 * SECOND_MS ? c : null;
};

function scopeOf(i: KnowledgeInputs): Region[] {
  if (i.read.kind === 'retry') return i.read.regions;
  if (i.read.kind === 'refresh') return queryableRegions(i.window);
  const { startMs, endMs } = i.window;
  const gaps = gapsOf(provenWithin(i.proofs, startMs, endMs), startMs, endMs);
  return gaps.flatMap((g) => queryablePieces(regionAround(g.lo, g.hi)));
}

/** A proven or unproven stretch shorter than this is not worth a walk of its own: it joins its neighbour. */
const MIN_PIECE_MS = 3_600_000;

interface Stretch {
  lo: number;
  hi: number;
  known: boolean;
}

/** The window as stretches whose stored events are complete (known) or not, slivers joined to a neighbour. */
function stretchesOf(proven: ReadonlyArray<{ lo: number; hi: number }>, lo: number, hi: number): Stretch[] {
  const all = [
    ...proven.map((p) => ({ ...p, known: true })),
    ...gapsOf(proven, lo, hi).map((g) => ({ ...g, known: false })),
  ].sort((a, b) => a.lo - b.lo);
  const out: Stretch[] = [];
  for (const s of all) {
    const last = out.at(-1);
    if (last && (s.hi - s.lo < MIN_PIECE_MS || last.known === s.known)) last.hi = s.hi;
    else if (last && last.hi - last.lo < MIN_PIECE_MS) out[out.length - 1] = { ...s, lo: last.lo };
    else out.push({ ...s });
  }
  return out;
}

/**
 * Stored times (ascending) where the events are guessed to lie: spread over their unit when stored as
 * reported to a coarse one (`spreadTimes`). As stored, every event of a day reported at its midnight
 * stayed in the rest of a walk after a proof of the day's later hours, and sized the next chunks as if
 * the whole day were left: a refresh of ten days to the day took 177 calls and failed, where 23 fresh.
 */
function whereStored(times: readonly number[], window: Interval): readonly number[] {
  const unit = unitOf(times);
  if (unit <= SECOND_MS) return times;
  const region = { lo: window.startMs, hi: window.endMs };
  return spreadTimes(times, region, unit)
    .map(Math.floor)
    .sort((a, b) => a - b);
}

/** Each scope region cut where proven parts begin and end, so that stored events size only what they describe. */
function piecesOf(i: KnowledgeInputs, scope: readonly Region[]): WindowKnowledge['pieces'] {
  const { startMs, endMs } = i.window;
  const proven = provenWithin(i.storedProofs, startMs, endMs);
  const inside = (t: number) => proven.some((p) => t >= p.lo && t <= p.hi);
  const times = whereStored(i.storedTimes.filter(inside), i.window);
  const perPoint = Math.max(1, Math.ceil(times.length / MAX_STORED_POINTS));
  const points = times.filter((_, k) => k % perPoint === perPoint - 1 || perPoint === 1);
  const stretches = stretchesOf(proven, startMs, endMs);
  return scope.flatMap((r) => {
    if (!stretches.some((s) => s.known)) return [{ region: r, stored: null }];
    return stretches.flatMap((s) => {
      const region = clip(regionAround(s.lo, s.hi), r);
      if (region === null) return [];
      const pts = s.known ? points.filter((t) => t > region.lo && t < region.hi) : [];
      const stored: Sample | null = pts.length > 0 ? { trust: 'stored', points: pts, ids: [], perPoint } : null;
      return [{ region, stored }];
    });
  });
}

export function windowKnowledge(i: KnowledgeInputs): WindowKnowledge {
  const cap: Cap = {
    // A cap measured within the TTL was an answer that large (see `withShared`).
    floor: Math.max(1, i.facts.capFloor, i.facts.measured ?? 1),
    measured: i.facts.measured,
    hint: i.facts.measuredBefore,
    probes: [],
    probeRegions: probeRegionsOf(i.window, i.facts.capRegion, i.nowMs),
    seenAtMs: i.nowMs,
    unfiltered: i.unfiltered,
  };
  const prefer = i.facts.prefer === 'none' && i.explore ? 'newest' : i.facts.prefer;
  const scope = scopeOf(i);
  const hintBacked = prefer === i.facts.prefer && i.facts.hintBacked;
  return {
    cap,
    prefer,
    hintBacked,
    circleCuts: i.circleCuts,
    scope,
    pieces: piecesOf(i, scope),
    nearby: i.nearby,
    learnedShare: learnedShareOf(i.facts.recounted),
  };
}

const fromOf = (prefer: OrderPreference): Order => (prefer === 'oldest' ? 'oldest' : 'newest');

/** The first frontier of a read; `startedAtMs` 0 for a read that proves nothing about deletions (a retry). */
export function initialFrontier(window: Interval, k: WindowKnowledge, startedAtMs = 0): Frontier {
  const sizing = sizingCap(k.cap);
  return {
    version: FRONTIER_VERSION,
    window,
    cap: k.cap,
    prefer: k.prefer,
    hintBacked: k.hintBacked,
    circleCuts: k.circleCuts,
    refuted: { newest: 0, oldest: 0 },
    confirmed: { newest: 0, oldest: 0 },
    nearby: k.nearby,
    tasks: k.pieces.map((p) =>
      startWalk(p.region, fromOf(k.prefer), fitOf(sizing, undefined, k.learnedShare), null, p.stored),
    ),
    unresolved: [],
    placed: [],
    startedAtMs,
    scope: k.scope,
    calls: 0,
    circleCalls: 0,
    callsBeforeRun: 0,
    eventsProven: 0,
    provenMs: 0,
    answers: { full: 0, proofs: 0, largest: 0, recent: [] },
    recount: { stored: 0, added: 0 },
    learnedShare: k.learnedShare,
  };
}

/**
 * A saved frontier taken up by a new run: its cap relearned when it is older than the TTL (else
 * raised by what others learned), a ceiling of its own for this run, and, when the sizing cap
 * changed, walks placed anew for it (except those asking a chunk again after a full answer: that
 * chunk stays smaller). Its order hint stays: a read guesses by one hint from start to end.
 */
export function resumeFrontier(f: Frontier, k: WindowKnowledge, nowMs: number, ttlMs: number): Frontier {
  const lapsed = nowMs - f.cap.seenAtMs >= ttlMs;
  const cap = lapsed ? k.cap : withShared(f.cap, { floor: k.cap.floor, measured: k.cap.measured });
  const sizing = sizingCap(cap);
  const resize = sizing !== sizingCap(f.cap);
  // A read saved before earlier reads learned a share takes it up; one it began with stays.
  const learnedShare = f.learnedShare ?? k.learnedShare;
  const tasks = f.tasks.map((t): Task => {
    if (!resize || t.kind !== 'walk' || t.held !== null || t.fullAnswers > 0) return t;
    return startWalk(t.region, t.from, fitOf(sizing, f.recount, learnedShare), t.rate, t.sample, t.stored);
  });
  return { ...f, cap, nearby: f.nearby ?? k.nearby, tasks, callsBeforeRun: f.calls - f.circleCalls, learnedShare };
}

/** How far outside the window a proven stretch is counted for its rate. */
const NEARBY_MS = 2 * DAY_MS;
/** A nearby rate is used only when it rests on this many events (fewer say little). */
export const MIN_NEARBY_EVENTS = 50;

/**
 * Proven stretches whose event counts give the window's nearby rate, in the order to try them: the
 * two days just after and just before the window when proven, then the stretch of the proof nearest
 * to it (the same filters elsewhere), unless that overlaps one already listed. `proofs` sorted by lo.
 */
export function nearbyStretches(
  proofs: ReadonlyArray<{ lo: number; hi: number }>,
  window: Interval,
): Array<readonly [number, number]> {
  const { startMs: start, endMs: end } = window;
  const beside: Array<readonly [number, number]> = [
    [end, end + NEARBY_MS],
    [start - NEARBY_MS, start],
  ];
  const neighbours = beside.filter(([lo, hi]) => covers(proofs, lo, hi, SECOND_MS));
  const overlaps = ([lo, hi]: readonly [number, number]) => neighbours.some(([l, h]) => lo <= h && l <= hi);
  return [...neighbours, ...nearestProven(proofs, start, end).filter((r) => !overlaps(r))];
}

/** The stretch of a proof nearest to the window, up to NEARBY_MS of it. */
function nearestProven(
  proofs: ReadonlyArray<{ lo: number; hi: number }>,
  start: number,
  end: number,
): Array<readonly [number, number]> {
  type P = { lo: number; hi: number };
  const distance = (p: P) => (p.hi < start ? start - p.hi : p.lo > end ? p.lo - end : 0);
  const outside = proofs.filter((p) => (p.hi < start || p.lo > end) && p.hi - p.lo >= NEARBY_MS / 2);
  const best = outside.reduce<P | null>((b, p) => (b === null || distance(p) < distance(b) ? p : b), null);
  if (best === null) return [];
  return [
    best.hi < start
      ? [Math.max(best.lo, best.hi - NEARBY_MS), best.hi]
      : [best.lo, Math.min(best.hi, best.lo + NEARBY_MS)],
  ];
}
