/**
 * Walks: a region covered from one end by chunks sized to come back below the cap. Whatever the
 * gateway keeps when it truncates, only a chunk that comes back below the cap is proven; a full
 * answer is read as a sample of where events are, and the chunk is asked again smaller. Where
 * chunks go is placed in place.ts; what answers say of the rest, in sample.ts and first-answer.ts.
 */
import { SECOND_MS } from '../../domain/time.js';
import { canSplit, type Order, type Rate, type Region, type SeenEvent, type WalkTask } from './frontier.js';
import { type Fit } from './fit.js';
import { spreadTimes, unitOf } from './units.js';
import {
  addCount,
  anchored,
  exactCutFits,
  flip,
  looksBeside,
  MAX_SHRINK,
  other,
  perMs,
  place,
  quietOf,
  seenFrom,
  type Sizing,
  startWalk,
  STORED_FULL,
  walkQuery,
  type WalkStep,
  whereIn,
  withQuietPast,
} from './place.js';
import { atLeastTheRest, estimateSample, exactSample, leftOver, recounted, storedIn } from './sample.js';
import {
  cutInThirds,
  knownAndPast,
  partShows,
  quietPastOf,
  refutedInHalves,
  restInParts,
  turnAtFarEnd,
} from './first-answer.js';

/**
 * After a chunk came back below the cap: the chunk is proven, the walk goes on below it. Its rate
 * leaves out a quiet stretch at the anchor beyond one average gap: the stretch next to the rest
 * is what the rest is like (a window reaching past the newest event is quiet at its top). An empty
 * chunk counts as a rate of zero there: the next chunk is the whole rest unless a sample bounds it.
 */
function afterProof(t: WalkTask, events: readonly SeenEvent[], fit: Fit): WalkTask[] {
  if (t.reach === null) return [];
  const a = anchored(t.from, t.region);
  const reach = flip(t.from, t.reach);
  const chunk = walkQuery(t);
  const times = events.map((e) => e.timeMs);
  const unit = unitOf(times);
  const points = spreadTimes(times, chunk, unit).map((p) => flip(t.from, p));
  // Where the unit is short against the chunk, the newest event is placed as reported, not spread
  // over its unit: a quiet stretch measured short sizes the next chunk a little small, the cheaper
  // error. Spread, answers to the hour cost the real months read in random, magnitude or arbitrary
  // order at a silent cap of 150 3 to 5% more calls (`npx tsx bench/coarse-times.ts`).
  const top = unit * RESOLVED <= chunk.hi - chunk.lo ? times.map((p) => flip(t.from, p)) : points;
  const newest = Math.max(reach, ...top);
  const gap = (newest - reach) / Math.max(1, events.length);
  const ms = events.length === 0 ? a.hi - reach : Math.min(a.hi, newest + gap) - reach;
  const rest = anchored(t.from, { lo: a.lo, hi: reach + SECOND_MS });
  // Stored events size every chunk of the walk; a full answer's sample only the next one, and over
  // stored events only while what is left of it past the proof holds a chunk's worth. A few of its
  // events left, the rate beyond them sized a chunk that reached into a stretch far denser than the
  // proof's (a re-read of a catalog 10% new: 1.144 x ideal where 1.166; `npx tsx bench/re-reads.ts`).
  const stored = leftOver(t.stored, rest);
  const left = t.fullAnswers > 0 && t.sample?.trust !== 'stored' ? leftOver(t.sample, rest) : null;
  const thin = left === null || left.points.length * left.perPoint < fit.stored;
  const answered = stored?.points.length && thin ? null : left;
  const edge = atDataEdge(t.rate, points, reach, ms);
  if (t.restCuts !== undefined && t.sample?.trust === 'estimate') return restInParts(t, events, rest, fit);
  if (t.restCuts !== undefined && t.sample?.trust === 'exact') {
    const parts = knownAndPast(t, rest, fit, addCount(t.rate, events.length, ms));
    if (parts) return parts;
  }
  return [
    startWalk(
      rest,
      t.from,
      fit,
      edge ? { events: 0, ms: Math.max(1, ms) } : addCount(t.rate, events.length, ms),
      answered && atLeastTheRest(recounted(answered, t.sample!, walkQuery(t), events.length), fit, events.length),
      stored,
      t.quietPast,
    ),
  ];
}

/** A unit this many times shorter than its chunk places the chunk's events as reported. */
const RESOLVED = 4;

/** In `atDataEdge`: the count fell below this share of what the rate expected... */
const EDGE_SHORT = 0.75;

/** ...and the events stop this many of their average gaps short of the chunk's far end. */
const EDGE_GAPS = 8;

/**
 * A proven chunk (anchored `points`, far end `reach`, rate measured over `ms`) read as meeting the
 * end of the data: a window reaching before the catalog's first event or past its last. Its rest is
 * then asked whole, where a chunk sized from the rate found nothing there and the empty rest took a
 * call more. Either sign alone is common in a real catalog's quiet hours (reading the quiet far end
 * alone as an edge cost an aftershock sequence at M2.5+ 13% more, by permutation); together, on
 * 1,700 windows of the bundled months inside the data, in five orders and four magnitude filters, they
 * changed no call, and on windows reaching past the data's ends they saved a few in every order.
 */
export function atDataEdge(rate: Rate | null, points: readonly number[], reach: number, ms: number): boolean {
  if (rate === null || points.length < 2) return false;
  const lowest = Math.min(...points);
  const gap = (Math.max(...points) - lowest) / (points.length - 1);
  return points.length < EDGE_SHORT * (rate.events / rate.ms) * ms && lowest - reach > EDGE_GAPS * gap;
}

/**
 * After a full answer: the chunk is asked again smaller, sized from the answer. An answer whose
 * events sit at the far end of a whole region turns the walk around (an oldest-first gateway read
 * from the newest end, say), so that the next chunk is cut just inside them.
 */
function afterFull(
  t: WalkTask,
  events: readonly SeenEvent[],
  s: Sizing,
  probedFull: readonly Region[],
): WalkTask | 'crowded' {
  const chunk = walkQuery(t);
  if (!canSplit(chunk)) return 'crowded';
  const whole = t.reach === null;
  const seen = looksBeside(
    whereIn(events, chunk).map((p) => flip(t.from, p)),
    anchored(t.from, chunk),
    probedFull.map((r) => anchored(t.from, r)),
  );
  // A full answer from a chunk reaching into the quiet stretch says it is not quiet: a gateway
  // ranking events by something that follows time (ids numbered in order) left it out of the first
  // answer. Its events are read as a sample, the chunk asked next sized from the walk's own rate.
  const notQuiet = t.quietPast !== undefined && anchored(t.from, chunk).lo < flip(t.from, t.quietPast);
  const open = (o: Order) => !t.guessed && !notQuiet && s.guesses.includes(o);
  // Events reaching the far end only read as kept from that end. Events reaching neither end (both
  // ends quiet) read as kept from the nearer one unless answers showed the walk's own order hold:
  // under it, events near the far end are the newest of a window whose top is quiet (the data ends
  // inside it), and a chunk from the walk's end just inside them proves them all.
  const farNearer = seen.nearer === 'bottom' && !(s.backed && s.guesses[0] === t.from);
  const turn = whole && !seen.top && (seen.bottom || farNearer) && open(other(t.from));
  const from: Order = turn ? other(t.from) : t.from;
  // Events away from the far end are read as the anchor's end kept; events reaching both ends only
  // when answers showed that order hold (a random subset reaches both ends too, and a chunk placed
  // from it spans the whole region again).
  const guess = turn || (open(from) && (!seen.bottom || (seen.top && s.guesses[0] === from && s.backed)));
  // Times so coarse that no cut a unit past the k-th event is left in the chunk (a day holding more than
  // a cap) say nothing of where the order guess would cut: the answer is read as an estimate instead.
  const exact = guess && exactCutFits(events, from, chunk, s);
  // A chunk sized from stored events, full: its events lie where the answer's lie, not spread over
  // its span at a rate, and a time shrink meant for samples that lean one way only makes a sliver
  // (a re-read of a catalog 10% new: 1.119 x ideal where 1.144, `npx tsx bench/re-reads.ts`).
  const held = storedIn(t.stored, chunk);
  const counted = !exact && held >= STORED_FULL * s.cap;
  const sample = exact
    ? exactSample(events)
    : guess
      ? { ...estimateSample(t, events, chunk, s.cap), perPoint: 1 }
      : estimateSample(t, events, chunk, s.cap, counted ? held : null);
  const a = anchored(from, t.region);
  const fullReach = whole ? a.lo : flip(from, t.reach!);
  const span = chunk.hi - chunk.lo;
  // The window's own answer bounds the density from below; a nearby rate may only say it is denser.
  const own = perMs(t.rate) ?? perMs(s.nearby) ?? 0;
  const rate = exact ? perMs(t.rate) : counted ? null : Math.max(own, (sample.perPoint * events.length) / span);
  // Full answers in a row shrink the chunk faster: the samples may all lean the same way.
  const shrink = MAX_SHRINK * (t.fullAnswers > 0 && !t.guessed ? 0.75 : 1);
  const quietPast = notQuiet ? undefined : (t.quietPast ?? quietPastOf(t));
  const quiet = quietOf(from, quietPast);
  const p = place(a, s, rate, seenFrom(from, chunk, sample), fullReach, exact || counted ? null : shrink * span, quiet);
  if (p === 'crowded' || p.reach === null) return 'crowded';
  // A part asked again is walked like every other chunk: its rest is no longer cut where the first answer's events were.
  const { restCuts, quietPast: _, ...walk } = t;
  const next = {
    ...walk,
    from,
    reach: flip(from, p.reach),
    guessed: p.guessed,
    sample,
    fullAnswers: t.fullAnswers + 1,
  };
  return withQuietPast(next, quietPast);
}

/**
 * Applies the answer to a walk's chunk. `full`: the answer may be truncated (cap.ts). `probedFull`:
 * stretches probes found holding a cap of events or more, which say where a full answer's events end.
 */
export function stepWalk(
  t: WalkTask,
  events: readonly SeenEvent[],
  full: boolean,
  s: Sizing,
  probedFull: readonly Region[],
): WalkStep {
  const tested = t.guessed ? t.from : null;
  if (!full) {
    return {
      next: afterProof(t, events, s),
      crowded: null,
      proven: events.length,
      guess: partShows(t, events) ?? (tested && { order: tested, held: true }),
    };
  }
  const verdict = tested && { order: tested, held: false };
  const halves = refutedInHalves(t, events, s);
  if (halves) return { next: halves, crowded: null, proven: 0, guess: verdict };
  const parts = cutInThirds(t, events, s, probedFull);
  if (parts) return { next: parts, crowded: null, proven: 0, guess: verdict };
  const turned = turnAtFarEnd(t, events, s);
  if (turned) return { next: [turned], crowded: null, proven: 0, guess: verdict };
  const after = afterFull(t, events, s, probedFull);
  if (after !== 'crowded') return { next: [after], crowded: null, proven: 0, guess: verdict };
  const chunk = walkQuery(t);
  // The crowded chunk is handed to circles; the walk goes on past it, a second of overlap kept.
  const a = anchored(t.from, t.region);
  const c = anchored(t.from, chunk);
  const rest = { lo: a.lo, hi: c.lo };
  const next =
    rest.hi - rest.lo >= 2 * SECOND_MS && t.reach !== null
      ? startWalk(anchored(t.from, rest), t.from, s, t.rate, null, leftOver(t.stored, anchored(t.from, rest)))
      : null;
  return { next: next ? [next] : [], crowded: chunk, proven: 0, guess: verdict };
}
