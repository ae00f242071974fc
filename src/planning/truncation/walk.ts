/**
 * Walks: a region covered from one end by chunks sized to come back below the cap. Whatever the
 * gateway keeps when it truncates, only a chunk that comes back below the cap is proven; a full
 * answer is read as a sample of where events are, and the chunk is asked again smaller.
 *
 * Sizing is the only place an order guess enters. Under the guess that the gateway keeps the
 * events nearest the walk's anchor (newest-first for a walk down from the top), a full answer holds
 * every event from its last point to the anchor, so the chunk asked next is cut just inside it.
 * Otherwise chunks are sized from the rate of the chunks counted exactly and from the sample.
 *
 * Everything here works in anchored coordinates, where the anchor is the top: a walk up negates
 * times, so one piece of code walks both ways.
 */
import { SECOND_MS } from '../../domain/time.js';
import {
  PRECISION_MS,
  canSplit,
  type Rate,
  type Region,
  type Sample,
  type SeenEvent,
  type WalkTask,
} from './frontier.js';

/** Share of the cap a chunk sized from rates and estimated samples aims for: counts vary by about 15%. */
export const FILL = 0.8;
/** Share of the cap a chunk sized from stored events aims for: the catalog changes little between reads. */
export const STORED_FILL = 0.93;
/** A full answer says its chunk held at least a cap; as a guess of how many, a bit more. */
const MISS_GROWTH = 1.25;
/** A chunk asked again after a full answer that no exact sample sizes spans at most this share of it. */
const MAX_SHRINK = 0.6;
/** How much older exact counts weigh against the newest one. */
const FADE = 0.5;
/** A count below this share of what the rate expected replaces the rate instead of joining it. */
const RATE_BREAK = 0.25;
/** A whole region's answer reaching neither end is read as kept from the end whose gap is this many times shorter. */
const NEARER = 2;

type Dir = WalkTask['dir'];

const flip = (dir: Dir, t: number): number => (dir === 'down' ? t : -t);
/** A region in anchored coordinates (and back: the map is its own inverse). */
export const anchored = (dir: Dir, r: Region): Region => (dir === 'down' ? r : { lo: -r.hi, hi: -r.lo });

const ceilSecond = (t: number): number => Math.ceil(t / SECOND_MS) * SECOND_MS;
const descending = (xs: readonly number[]): number[] => [...xs].sort((a, b) => b - a);

/** Events an exact chunk leaves out below the cap: ties, and gateways that keep nearly that order. */
export function exactMargin(cap: number): number {
  return Math.min(3, Math.floor(cap / 20));
}

/** The chunk a walk asks now, in real coordinates. */
export function walkQuery(t: WalkTask): Region {
  if (t.reach === null) return t.region;
  return t.dir === 'down' ? { lo: t.reach, hi: t.region.hi } : { lo: t.region.lo, hi: t.reach };
}

/** Events per ms of a rate, or null when nothing was counted. */
export const perMs = (r: Rate | null): number | null => (r === null ? null : r.events / r.ms);

/** A rate with one more exact count (`events` in `ms`), older counts faded. */
export function addCount(r: Rate | null, events: number, ms: number): Rate {
  const span = Math.max(1, ms);
  // A count far below what the rate expected says the rate changed (a quiet stretch, the end of the
  // data): the old counts would size the next chunks as if it had not.
  if (r !== null && events < RATE_BREAK * (r.events / r.ms) * span) return { events, ms: span };
  return { events: events + FADE * (r?.events ?? 0), ms: span + FADE * (r?.ms ?? 0) };
}

/** Share of the cap a whole rest may be expected to hold and still be asked in one chunk: no sliver of a call. */
const WHOLE_FILL = 0.9;

function wholeFits(r: Region, cap: number, rate: number | null, sample: Sample | null): boolean {
  if (sample?.trust === 'exact') return false;
  const byRate = rate === null ? 0 : rate * (r.hi - r.lo);
  const byPoints = sample ? sample.points.filter((t) => t > r.lo).length * sample.perPoint : 0;
  if (sample?.trust === 'stored') return byPoints <= STORED_FILL * cap;
  return (rate !== null || sample !== null) && Math.max(byRate, byPoints) <= WHOLE_FILL * cap;
}

interface Placement {
  /** Anchored reach, or null for the whole region. */
  reach: number | null;
  guessed: boolean;
}

/**
 * Where the next chunk of anchored region `r` should reach: the lowest point above which the
 * estimate stays within the target. `floor`: after a full answer, the chunk must end strictly
 * above this anchored point (it is asked smaller); `shrink`: and span at most this much.
 */
function place(
  r: Region,
  cap: number,
  rate: number | null,
  sample: Sample | null,
  floor: number | null,
  shrinkMs: number | null,
): Placement | 'crowded' {
  const points = sample ? descending(sample.points) : [];
  let x: number | null;
  let guessed = false;
  if (sample?.trust === 'exact') {
    const k = Math.min(points.length, cap - exactMargin(cap));
    x = ceilSecond(points[k - 1]! + PRECISION_MS);
    guessed = true;
  } else {
    const target = (sample?.trust === 'stored' ? STORED_FILL : FILL) * cap;
    const byRate = rate ? r.hi - target / rate : null;
    const take = sample ? Math.floor(target / sample.perPoint) : Infinity;
    // Past the `take` points nearest the anchor, halfway to the next; with none to take, at the nearest.
    const byPoints = take >= points.length ? null : take === 0 ? points[0]! : (points[take - 1]! + points[take]!) / 2;
    // Stored events are the best measure there is; any other sample is only trusted as far as the rate agrees.
    const trustPoints = sample?.trust === 'stored' && byPoints !== null;
    const candidates = (trustPoints ? [byPoints] : [byRate, byPoints]).filter((v): v is number => v !== null);
    x = candidates.length > 0 ? Math.max(...candidates) : null;
  }
  const lowest = floor === null ? r.lo : floor + SECOND_MS;
  const shrunk = shrinkMs === null ? lowest : Math.max(lowest, r.hi - shrinkMs);
  if (x === null || (floor === null && (x <= r.lo || wholeFits(r, cap, rate, sample)))) return { reach: null, guessed };
  const reach = Math.max(ceilSecond(Math.max(x, shrunk)), r.lo + SECOND_MS);
  if (!Number.isSafeInteger(reach)) throw new Error(`walk placement produced ${reach} in ${r.lo}..${r.hi}`);
  // Even two seconds at the anchor are expected to be too many: ask just those, while they are a smaller chunk.
  if (reach > r.hi - 2 * SECOND_MS)
    return r.hi - 2 * SECOND_MS >= Math.max(r.lo + SECOND_MS, lowest)
      ? { reach: r.hi - 2 * SECOND_MS, guessed }
      : 'crowded';
  return { reach, guessed };
}

/** A new walk over `region`, its first chunk placed from what is known. */
export function startWalk(region: Region, dir: Dir, cap: number, rate: Rate | null, sample: Sample | null): WalkTask {
  const task: WalkTask = { kind: 'walk', dir, region, reach: null, guessed: false, rate, sample, misses: 0 };
  const a = anchored(dir, region);
  const p = place(a, cap, perMs(rate), sample && flipSample(dir, sample), null, null);
  if (p === 'crowded' || p.reach === null) return task;
  return { ...task, reach: flip(dir, p.reach), guessed: p.guessed };
}

const flipSample = (dir: Dir, s: Sample): Sample => (dir === 'down' ? s : { ...s, points: s.points.map((t) => -t) });

/** Chapman's estimate of a population from two samples that share `both` members. */
export function chapman(first: number, second: number, both: number): number {
  return ((first + 1) * (second + 1)) / (both + 1) - 1;
}

type End = 'top' | 'bottom';

/**
 * Whether a full answer's events reach the ends of its anchored chunk: an end is reached when the
 * stretch between it and the nearest event is short against the stretch the events span (a
 * random subset reaches both ends, a newest-first answer only the top, unless the top was quiet).
 * `nearer`: the end they clearly sit nearer to, the top unless the bottom's gap is far shorter.
 */
export function looks(points: readonly number[], chunk: Region): { top: boolean; bottom: boolean; nearer: End } {
  const max = Math.max(...points);
  const min = Math.min(...points);
  const near = 0.25 * (max - min) + 2 * PRECISION_MS;
  const nearer = chunk.hi - max <= NEARER * (min - chunk.lo) ? 'top' : 'bottom';
  return { top: chunk.hi - max <= near, bottom: min - chunk.lo <= near, nearer };
}

export interface WalkStep {
  /** The walk going on, or null when it covered its region. */
  next: WalkTask | null;
  /** A chunk too short to cut that came back full (real coordinates): cut it by place. */
  crowded: Region | null;
  /** Events proven by this answer. */
  proven: number;
  /** The order guess this chunk was placed under, and whether it held. */
  guess: { dir: 'newest' | 'oldest'; held: boolean } | null;
}

type Guess = 'newest' | 'oldest';
const guessOf = (dir: Dir): Guess => (dir === 'down' ? 'newest' : 'oldest');

/**
 * After a chunk came back below the cap: the chunk is proven, the walk goes on below it. Its rate
 * leaves out a quiet stretch at the anchor beyond one average gap: the stretch next to the rest
 * is what the rest is like (a window reaching past the newest event is quiet at its top).
 */
function afterProof(t: WalkTask, events: readonly SeenEvent[], cap: number): WalkTask | null {
  if (t.reach === null) return null;
  const a = anchored(t.dir, t.region);
  const reach = flip(t.dir, t.reach);
  const newest = Math.max(reach, ...events.map((e) => flip(t.dir, e.timeMs)));
  const gap = (newest - reach) / Math.max(1, events.length);
  const ms = events.length === 0 ? a.hi - reach : Math.min(a.hi, newest + gap) - reach;
  const rest = anchored(t.dir, { lo: a.lo, hi: reach + SECOND_MS });
  // An empty chunk says the rate is low, not zero: counted as one event, the next chunk stays finite.
  // Stored events size every chunk of the walk; a full answer's sample only the next one.
  const carried = t.misses > 0 || t.sample?.trust === 'stored' ? leftOver(t.sample, rest) : null;
  return startWalk(rest, t.dir, cap, addCount(t.rate, Math.max(1, events.length), ms), carried);
}

/**
 * What a full answer showed of the rest of its chunk stays known for the next chunk after a
 * smaller one is proven: a crowded stretch just past the proof must not be asked at the old rate.
 */
export function leftOver(s: Sample | null, rest: Region): Sample | null {
  if (s === null || s.trust === 'stored')
    return s && { ...s, points: s.points.filter((t) => t > rest.lo && t < rest.hi) };
  const keep = s.points.map((t, i) => ({ t, id: s.ids[i] ?? '' })).filter(({ t }) => t > rest.lo && t < rest.hi);
  if (keep.length === 0) return null;
  return { trust: 'estimate', points: keep.map((k) => k.t), ids: keep.map((k) => k.id), perPoint: s.perPoint };
}

/**
 * After a full answer: the chunk is asked again smaller, sized from the answer. An answer whose
 * events sit at the far end of a whole region turns the walk around (an oldest-first gateway read
 * from the top, say), so that the next chunk is cut just inside them.
 */
function afterMiss(
  t: WalkTask,
  events: readonly SeenEvent[],
  cap: number,
  guesses: readonly Guess[],
): WalkTask | 'crowded' {
  const chunk = walkQuery(t);
  if (!canSplit(chunk)) return 'crowded';
  const whole = t.reach === null;
  const seen = looks(
    events.map((e) => flip(t.dir, e.timeMs)),
    anchored(t.dir, chunk),
  );
  const open = (d: Dir) => !t.guessed && guesses.includes(guessOf(d));
  const other: Dir = t.dir === 'down' ? 'up' : 'down';
  // Events reaching neither end of a whole region (its far stretch quiet) are read as kept from the nearer end.
  const bottomOnly = !seen.top && (seen.bottom || seen.nearer === 'bottom');
  const turn = whole && bottomOnly && open(other);
  const dir: Dir = turn ? other : t.dir;
  // Events away from the far end are read as the anchor's end kept; events reaching both ends only
  // when that is the window's first guess (a random subset reaches both ends too).
  const exact = turn || (open(dir) && (!seen.bottom || (seen.top && guesses[0] === guessOf(dir))));
  const sample = exact ? exactSample(events) : estimateSample(t, events, chunk, cap);
  const a = anchored(dir, t.region);
  const missedReach = whole ? a.lo : flip(dir, t.reach!);
  const span = chunk.hi - chunk.lo;
  const rate = exact ? perMs(t.rate) : Math.max(perMs(t.rate) ?? 0, (sample.perPoint * events.length) / span);
  // Full answers in a row shrink the chunk faster: the samples may all lean the same way.
  const shrink = MAX_SHRINK * (t.misses > 0 && !t.guessed ? 0.75 : 1);
  const p = place(a, cap, rate, flipSample(dir, sample), missedReach, exact ? null : shrink * span);
  if (p === 'crowded' || p.reach === null) return 'crowded';
  return { ...t, dir, reach: flip(dir, p.reach), guessed: p.guessed, sample, misses: t.misses + 1 };
}

function exactSample(events: readonly SeenEvent[]): Sample {
  return { trust: 'exact', points: events.map((e) => e.timeMs), ids: events.map((e) => e.id), perPoint: 1 };
}

/**
 * A full answer read as a sample of unknown bias: each point stands for the events its chunk
 * probably held, at least a cap and a bit more, more when two answers in a row share few events.
 */
function estimateSample(t: WalkTask, events: readonly SeenEvent[], chunk: Region, cap: number): Sample {
  const before = t.sample?.trust === 'stored' ? null : t.sample;
  let estimate = MISS_GROWTH * Math.max(cap, events.length);
  if (before) {
    const inside = before.ids.filter((_, i) => before.points[i]! > chunk.lo && before.points[i]! < chunk.hi);
    const ids = new Set(events.map((e) => e.id));
    const both = inside.filter((id) => ids.has(id)).length;
    if (inside.length > 0) estimate = Math.max(estimate, chapman(inside.length, events.length, both));
  }
  return {
    trust: 'estimate',
    points: events.map((e) => e.timeMs),
    ids: events.map((e) => e.id),
    perPoint: estimate / events.length,
  };
}

/** Applies the answer to a walk's chunk. `guesses`: the orders the window still guesses, first the likeliest. */
export function stepWalk(
  t: WalkTask,
  events: readonly SeenEvent[],
  saturated: boolean,
  cap: number,
  guesses: readonly Guess[],
): WalkStep {
  const tested = t.guessed ? guessOf(t.dir) : null;
  if (!saturated) {
    return {
      next: afterProof(t, events, cap),
      crowded: null,
      proven: events.length,
      guess: tested && { dir: tested, held: true },
    };
  }
  const after = afterMiss(t, events, cap, guesses);
  const verdict = tested && { dir: tested, held: false };
  if (after !== 'crowded') return { next: after, crowded: null, proven: 0, guess: verdict };
  const chunk = walkQuery(t);
  // The crowded chunk is handed to circles; the walk goes on past it, a second of overlap kept.
  const a = anchored(t.dir, t.region);
  const c = anchored(t.dir, chunk);
  const rest = { lo: a.lo, hi: c.lo };
  const next =
    rest.hi - rest.lo >= 2 * SECOND_MS && t.reach !== null
      ? startWalk(anchored(t.dir, rest), t.dir, cap, t.rate, null)
      : null;
  return { next, crowded: chunk, proven: 0, guess: verdict };
}
