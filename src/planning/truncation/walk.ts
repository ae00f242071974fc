/**
 * Walks: a region covered from one end by chunks sized to come back below the cap. Whatever the
 * gateway keeps when it truncates, only a chunk that comes back below the cap is proven; a full
 * answer is read as a sample of where events are, and the chunk is asked again smaller.
 *
 * Sizing is the only place an order guess enters. Under the guess that the gateway keeps the
 * events nearest the end the walk starts from (newest-first for a walk from the newest end), a full
 * answer holds every event from its last point to that end, so the chunk asked next is cut just
 * inside it. Otherwise chunks are sized from the rate of the chunks counted exactly, the sample,
 * and (after a full answer only) the rate of proven stretches near the window.
 *
 * `cap` here is always the sizing cap (cap.ts), never the floor: sizing is not proving.
 *
 * Everything works in anchored coordinates, where the walk's end is the top: a walk from the
 * oldest end negates times, so one piece of code walks both ways.
 */
import { SECOND_MS } from '../../domain/time.js';
import {
  canSplit,
  clampCut,
  splitAt,
  type Order,
  type Rate,
  type Recount,
  type Region,
  type Sample,
  type SeenEvent,
  type WalkTask,
} from './frontier.js';
import { evenTake, exactMargin, storedTake, type Fit } from './fit.js';
import { spreadTimes, unitOf } from './units.js';

/** Share of the cap a chunk sized from rates and estimated samples aims for: counts vary by about 15%. */
export const FILL = 0.8;
/** A full answer says its chunk held at least a cap; as a guess of how many, a bit more. */
const FULL_GROWTH = 1.25;
/**
 * A whole region's first full answer says only that it holds at least a cap. Read as 1.7 caps, the
 * chunk asked next holds under half its events, so it comes back below the cap while the region
 * holds fewer than two caps, whatever the gateway kept, and its count sizes the rest (recounted).
 * 1.25 here left windows of 330 to 399 events spread over the window at ideal + 3 to + 5; 1.8 and
 * more asked windows of 201 to 260 events with a burst a call more often than 1.7.
 */
const FIRST_GROWTH = 1.7;
/**
 * A full chunk that held at least this share of a cap in stored events is read by them: it holds a
 * tenth more than they or the cap, where its answer's events lie. 0.5 asked the same calls; 0.9 lost
 * most of the gain (`npx tsx bench/re-reads.ts`).
 */
const STORED_FULL = 0.8;
/** A chunk asked again after a full answer that no exact sample sizes spans at most this share of it. */
const MAX_SHRINK = 0.6;
/**
 * How much older exact counts weigh against the newest one: about the last two and a half chunks
 * count. 0.5 took 1 to 3% more calls on the real months and at a silent cap of 100, 0.75 more with
 * orders that keep no end (`npx tsx bench/truncation-cases.ts 5`).
 */
const FADE = 0.6;
/**
 * A count below this share of what the rate expected drops the rate: the rest is asked whole unless
 * a sample bounds it. 0.55 where 0.4 put a burst's windows of 261 to 399 events over ideal + 2 a
 * third less often and cost nothing elsewhere; 0.65 and more cost the walks at a silent cap of 100
 * (`npx tsx bench/truncation-cases.ts 5`).
 */
const RATE_BREAK = 0.55;
/** A whole region's answer reaching neither end is read as kept from the end whose gap is this many times shorter. */
const NEARER = 2;

const flip = (from: Order, t: number): number => (from === 'newest' ? t : -t);
/** A region in anchored coordinates (and back: the map is its own inverse). */
export const anchored = (from: Order, r: Region): Region => (from === 'newest' ? r : { lo: -r.hi, hi: -r.lo });

const ceilSecond = (t: number): number => Math.ceil(t / SECOND_MS) * SECOND_MS;
const descending = (xs: readonly number[]): number[] => [...xs].sort((a, b) => b - a);
/** Where an answer's events to a query of `region` are guessed to lie, their times reported to any unit. */
const whereIn = (events: readonly SeenEvent[], region: Region): readonly number[] => {
  const times = events.map((e) => e.timeMs);
  return spreadTimes(times, region, unitOf(times));
};

/** The chunk a walk asks now, in real coordinates. */
export function walkQuery(t: WalkTask): Region {
  if (t.reach === null) return t.region;
  return t.from === 'newest' ? { lo: t.reach, hi: t.region.hi } : { lo: t.region.lo, hi: t.reach };
}

/** Events per ms of a rate, or null when nothing was counted. */
export const perMs = (r: Rate | null): number | null => (r === null ? null : r.events / r.ms);

/** A rate with one more exact count (`events` in `ms`), older counts faded. */
export function addCount(r: Rate | null, events: number, ms: number): Rate {
  const span = Math.max(1, ms);
  // A count far below what the rate expected says the rate changed (a quiet stretch, the end of the
  // data): the old counts would size the next chunks as if it had not, and a rate from that one low
  // count would still cut the quiet rest into chunks. The rest is asked whole: a full answer there
  // is a sample that sizes the next chunk.
  if (r !== null && events < RATE_BREAK * (r.events / r.ms) * span) return { events: 0, ms: span };
  return { events: events + FADE * (r?.events ?? 0), ms: span + FADE * (r?.ms ?? 0) };
}

/** Share of the cap a whole rest may be expected to hold and still be asked in one chunk: no sliver of a call. */
const WHOLE_FILL = 0.9;
/**
 * The same for a rest sized from exact counts alone, no sample: a rate over several chunks varies
 * less than a sample's estimate. 0.97 asked fewer calls than 0.9 in every case that moved (random
 * and magnitude orders, bursts, short windows at a silent cap); 1.0 cost the M2.5+ stream
 * oldest-first 3 calls in 33 (`npx tsx bench/truncation-cases.ts 5`).
 */
const WHOLE_FILL_COUNTED = 0.97;

function wholeFits(r: Region, fit: Fit, rate: number | null, sample: Sample | null): boolean {
  if (sample?.trust === 'exact') return false;
  const byRate = rate === null ? 0 : rate * (r.hi - r.lo);
  const byPoints = sample ? sample.points.filter((t) => t > r.lo).length * sample.perPoint : 0;
  if (sample?.trust === 'stored') return byPoints <= storedTake(fit, sample.perPoint) * sample.perPoint;
  const fill = sample === null ? WHOLE_FILL_COUNTED : WHOLE_FILL;
  return (rate !== null || sample !== null) && Math.max(byRate, byPoints) <= fill * fit.cap;
}

/**
 * A rest sized right after a full answer (its sample an estimate) expected to hold more than this
 * share of the cap, and at most two chunks, is asked in two halves: asked whole it comes back full
 * when the estimate fell short (a window of 396 to 399 events after its first 196 were proven), and
 * a full answer costs two calls more. 0.8 put generated windows of 396 to 399 events over ideal + 2
 * in 37 of 5,000 where 288, at 3% more calls on windows of 201 to 395 (still within ideal + 2); 0.7
 * cost twice that (`npx tsx bench/truncation-cases.ts 5`).
 */
const HALVES = 0.8;

function inHalves(r: Region, fit: Fit, rate: number | null, sample: Sample | null, fullReach: number | null): boolean {
  if (sample?.trust !== 'estimate' || fullReach !== null || rate === null) return false;
  const expected = rate * (r.hi - r.lo);
  return expected > HALVES * fit.cap && expected <= 2 * FILL * fit.cap;
}

interface Placement {
  /** Anchored reach, or null for the whole region. */
  reach: number | null;
  guessed: boolean;
}

/** A sample in anchored coordinates, with the unit its times are reported to and where they are guessed to lie. */
interface Seen {
  sample: Sample;
  unit: number;
  /** The points spread over their units (`spreadTimes`), descending: the points themselves at a second. */
  spread: readonly number[];
}

/** `sample` (real coordinates) as a walk from `from` over `region` sees it. */
function seenFrom(from: Order, region: Region, sample: Sample | null): Seen | null {
  if (sample === null) return null;
  const unit = unitOf(sample.points);
  const spread = spreadTimes(sample.points, region, unit).map((t) => flip(from, t));
  return { sample: flipSample(from, sample), unit, spread: descending(spread) };
}

/**
 * The next chunk from an `exact` sample (anchored points, descending): a unit past its k-th point, k
 * a little below the cap, so that under the order guess it holds fewer than k events, however the
 * gateway rounded their times. Null with no point to cut by.
 */
function exactReach(fit: Fit, points: readonly number[], unit: number): number | null {
  const k = Math.min(points.length, fit.cap - exactMargin(fit.cap));
  return k === 0 ? null : ceilSecond(points[k - 1]! + unit);
}

/** Whether a full answer's events, read exactly, leave a cut inside their chunk (`exactReach`). */
function exactCutFits(events: readonly SeenEvent[], from: Order, chunk: Region, fit: Fit): boolean {
  const times = events.map((e) => e.timeMs);
  const unit = unitOf(times);
  if (unit <= SECOND_MS) return true;
  const x = exactReach(fit, descending(times.map((t) => flip(from, t))), unit);
  return x === null || x <= anchored(from, chunk).hi - 2 * SECOND_MS;
}

/**
 * Where the next chunk of anchored region `r` should reach: the lowest point above which the
 * estimate stays within the target. `fullReach`: after a full answer, the chunk must end strictly
 * above this anchored point (it is asked smaller); `shrinkMs`: and span at most this much.
 */
function place(
  r: Region,
  fit: Fit,
  rate: number | null,
  seen: Seen | null,
  fullReach: number | null,
  shrinkMs: number | null,
): Placement | 'crowded' {
  const sample = seen?.sample ?? null;
  const unit = seen?.unit ?? SECOND_MS;
  const all = sample ? descending(sample.points) : [];
  // A point a unit or more past the anchor's end is no event of the region: the gateway reports
  // times coarser than it filters on (to the minute), and such points would place every chunk at the
  // anchor, a second at a time.
  const points = all.filter((p) => p < r.hi + unit);
  const coarse = points.length < all.length;
  let x: number | null;
  let guessed = false;
  if (sample?.trust === 'exact') {
    x = exactReach(fit, points, unit);
    guessed = true;
  } else {
    // Points spread over their units where reported coarsely.
    const spread = seen?.spread.filter((p) => p < r.hi + SECOND_MS) ?? [];
    const target = FILL * fit.cap;
    const byRate = rate ? r.hi - target / rate : null;
    const take = !sample
      ? Infinity
      : sample.trust === 'stored'
        ? evenTake(spread.length, fit, sample.perPoint)
        : Math.floor(target / sample.perPoint);
    // Past the `take` points nearest the anchor, halfway to the next, and far enough that the next
    // is outside even where reported times are coarse (a crowded second's events all report the
    // same time); with none to take, at the nearest.
    const byPoints =
      take >= spread.length
        ? null
        : take === 0
          ? spread[0]!
          : Math.max((spread[take - 1]! + spread[take]!) / 2, spread[take]! + SECOND_MS);
    // Stored events are the best measure there is; any other sample is only trusted as far as the rate agrees.
    const trustPoints = sample?.trust === 'stored' && byPoints !== null;
    const candidates = (trustPoints ? [byPoints] : [byRate, byPoints]).filter((v): v is number => v !== null);
    x = candidates.length > 0 ? Math.max(...candidates) : null;
  }
  const half = inHalves(r, fit, rate, sample, fullReach);
  // After a full answer whose points said nothing of the region, halve it: where its events lie is unknown.
  if (half || (coarse && fullReach !== null && (x === null || x >= r.hi - 2 * SECOND_MS))) x = (r.lo + r.hi) / 2;
  const lowest = fullReach === null ? r.lo : fullReach + SECOND_MS;
  const shrunk = shrinkMs === null ? lowest : Math.max(lowest, r.hi - shrinkMs);
  if (x === null || (fullReach === null && !half && (x <= r.lo || wholeFits(r, fit, rate, sample))))
    return { reach: null, guessed };
  const reach = Math.max(ceilSecond(Math.max(x, shrunk)), r.lo + SECOND_MS);
  if (!Number.isSafeInteger(reach)) throw new Error(`walk placement produced ${reach} in ${r.lo}..${r.hi}`);
  // Even two seconds at the anchor are expected to be too many: ask just those, while they are a smaller chunk.
  if (reach > r.hi - 2 * SECOND_MS)
    return r.hi - 2 * SECOND_MS >= Math.max(r.lo + SECOND_MS, lowest)
      ? { reach: r.hi - 2 * SECOND_MS, guessed }
      : 'crowded';
  return { reach, guessed };
}

/**
 * A new walk over `region` from end `from`, its first chunk placed from what is known: `sample`
 * when given, else the events stored there (`stored`, the stored sample by default).
 */
export function startWalk(
  region: Region,
  from: Order,
  fit: Fit,
  rate: Rate | null,
  sample: Sample | null,
  stored: Sample | null = sample?.trust === 'stored' ? sample : null,
): WalkTask {
  const task: WalkTask = {
    kind: 'walk',
    from,
    region,
    reach: null,
    guessed: false,
    rate,
    sample: sample ?? stored,
    stored,
    fullAnswers: 0,
    held: null,
  };
  sample = task.sample;
  const a = anchored(from, region);
  const p = place(a, fit, perMs(rate), seenFrom(from, region, sample), null, null);
  if (p === 'crowded' || p.reach === null) return task;
  return { ...task, reach: flip(from, p.reach), guessed: p.guessed };
}

const flipSample = (from: Order, s: Sample): Sample =>
  from === 'newest' ? s : { ...s, points: s.points.map((t) => -t) };

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
  const near = 0.25 * (max - min) + 2 * SECOND_MS;
  const nearer = chunk.hi - max <= NEARER * (min - chunk.lo) ? 'top' : 'bottom';
  return { top: chunk.hi - max <= near, bottom: min - chunk.lo <= near, nearer };
}

/**
 * `looks`, knowing stretches of the chunk that probes found holding at least a cap of events
 * (`probedFull`, anchored). Beside the events, such a stretch is not quiet: the answer ends where the
 * events it kept end, and reads as reaching the chunk's other end; cut in three, the part holding
 * that stretch would come back full for sure. (A stretch a probe found empty says nothing here: a
 * random subset of a lone cluster beside it looks the same as the newest events of a dense rest.)
 */
function looksBeside(
  points: readonly number[],
  chunk: Region,
  probedFull: readonly Region[],
): ReturnType<typeof looks> {
  const seen = looks(points, chunk);
  const [min, max] = [Math.min(...points), Math.max(...points)];
  for (const r of probedFull) {
    if (r.lo < chunk.lo || r.hi > chunk.hi) continue;
    if (r.hi <= min) seen.top = true;
    if (r.lo >= max) seen.bottom = true;
  }
  return seen;
}

export interface WalkStep {
  /** The walks going on (none when it covered its region; three when a region was cut where its answer's events are). */
  next: WalkTask[];
  /** A chunk too short to cut that came back full (real coordinates): cut it by place. */
  crowded: Region | null;
  /** Events proven by this answer. */
  proven: number;
  /** The order guess this chunk was placed under, and whether it held. */
  guess: { order: Order; held: boolean } | null;
}

/** What sizes a walk's chunks besides its own answers. */
export interface Sizing extends Fit {
  /** The orders the window still guesses, the likeliest first. */
  guesses: readonly Order[];
  /** Answers (other windows' or this one's) saw the first guess hold: not only a default. */
  backed: boolean;
  /** Events per ms of proven stretches near the window: only a lower bound on the density a full answer shows. */
  nearby: Rate | null;
}

/**
 * After a chunk came back below the cap: the chunk is proven, the walk goes on below it. Its rate
 * leaves out a quiet stretch at the anchor beyond one average gap: the stretch next to the rest
 * is what the rest is like (a window reaching past the newest event is quiet at its top). An empty
 * chunk counts as a rate of zero there: the next chunk is the whole rest unless a sample bounds it.
 */
function afterProof(t: WalkTask, events: readonly SeenEvent[], fit: Fit): WalkTask | null {
  if (t.reach === null) return null;
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
  return startWalk(
    rest,
    t.from,
    fit,
    edge ? { events: 0, ms: Math.max(1, ms) } : addCount(t.rate, events.length, ms),
    answered && atLeastTheRest(recounted(answered, t.sample!, walkQuery(t), events.length), fit, events.length),
    stored,
  );
}

/**
 * A full answer's points left past the chunk a proof then covered: the full chunk held at least a
 * cap and the proof `proven` of them, so the rest of it holds at least the difference, however
 * the recount reads the points. Without this floor, points placed by a guess (times reported to the
 * day, spread over their unit) that fell in the proven chunk read the crowded rest as thin, and the
 * next chunk took in the whole region again.
 */
function atLeastTheRest(s: Sample, fit: Fit, proven: number): Sample {
  if (s.trust !== 'estimate' || s.points.length === 0) return s;
  return { ...s, perPoint: Math.max(s.perPoint, (fit.cap - proven) / s.points.length) };
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

/** A count of about a hundred events varies by about a tenth: the rest is sized for that many more. */
const RECOUNT_MARGIN = 1.1;

/**
 * An estimated sample's rest after a chunk it sized was proven: each point stands for as many events
 * as the points inside that chunk did (its exact count over its points, a tenth more), when that is
 * fewer than the guess made before any count. A window of 201 to 260 events then asks its rest
 * whole; never more, since a sample leaning toward one end (oldest-first, read as a subset) has few
 * points in the chunk and would size the rest as a burst.
 */
function recounted(rest: Sample, whole: Sample, chunk: Region, proven: number): Sample {
  const inside = whole.points.filter((p) => p > chunk.lo && p < chunk.hi).length;
  if (rest.trust !== 'estimate' || inside === 0) return rest;
  return { ...rest, perPoint: Math.min(rest.perPoint, Math.max(1, (RECOUNT_MARGIN * proven) / inside)) };
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

const other = (o: Order): Order => (o === 'newest' ? 'oldest' : 'newest');

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
  const open = (o: Order) => !t.guessed && s.guesses.includes(o);
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
  const p = place(a, s, rate, seenFrom(from, chunk, sample), fullReach, exact || counted ? null : shrink * span);
  if (p === 'crowded' || p.reach === null) return 'crowded';
  return { ...t, from, reach: flip(from, p.reach), guessed: p.guessed, sample, fullAnswers: t.fullAnswers + 1 };
}

/**
 * A whole region's first full answer whose events reach neither end: the events sit inside it, with
 * quiet stretches on both sides (a window reaching past the data, a filtered stream's few events).
 * Cut in three where a third of its events lie each, the parts are asked whole: whatever subset the
 * gateway kept, each part probably holds fewer than a cap while the region holds fewer than two, and
 * when it kept the newest (or oldest) the outer part holds the rest and a third of the answer, below
 * the cap up to about 1.66 caps. Two cuts, not one: with one, the half holding the unseen events
 * comes back full from about 1.5 caps, and its walk costs three calls or more. A dense region pays
 * up to two more full answers this way, and each part's answer then shows its own density.
 */
function cutInThirds(
  t: WalkTask,
  events: readonly SeenEvent[],
  s: Sizing,
  probedFull: readonly Region[],
): WalkTask[] | null {
  if (t.reach !== null || t.fullAnswers > 0 || t.sample?.trust === 'stored' || events.length < 2) return null;
  // Answers that showed the walk's own order hold read such an answer exactly (afterFull).
  if (s.backed && s.guesses[0] === t.from) return null;
  const times = [...whereIn(events, t.region)].sort((a, b) => a - b);
  const seen = looksBeside(times, t.region, probedFull);
  if (seen.top || seen.bottom) return null;
  if (atOneEnd(times, t.region)) return null;
  const parts = cutInto(t.region, times, CUT_PARTS);
  if (parts === null) return null;
  const sample = estimateSample(t, events, t.region, s.cap);
  // Counted as asked again after a full answer: each part keeps the answer's sample for its next
  // chunk, is cut neither again here nor into lanes before a proof, and is not placed anew on resume.
  const walks = parts.map((r) => ({
    ...startWalk(r, t.from, s, t.rate, leftOver(sample, r), leftOver(t.stored, r)),
    fullAnswers: 1,
  }));
  return t.from === 'newest' ? walks.reverse() : walks;
}

/** In `atOneEnd`: the quiet stretch at the far end is this many times the near one, at least... */
const ONE_END = 4;
/** ...and the near one at most this many times the stretch the events span. */
const NEAR_QUIET = 2;

/**
 * Events (sorted) beside a quiet stretch at one end not much longer than the stretch they span, far
 * from the other end: a window reaching past the data's end (or before its start), read as that end
 * kept (`afterFull`), not cut in three, whose parts would be a third of a cap and a whole dense rest.
 */
function atOneEnd(times: readonly number[], r: Region): boolean {
  const span = times.at(-1)! - times[0]!;
  const gaps = [r.hi - times.at(-1)!, times[0]! - r.lo].sort((a, b) => a - b);
  return gaps[0]! <= NEAR_QUIET * span && gaps[1]! >= ONE_END * gaps[0]!;
}

/** Parts a whole region's first answer reaching neither end is cut into (cutInThirds). */
const CUT_PARTS = 3;

/** `r` cut into `n` parts holding equal shares of sorted `times`, oldest first; null when a cut does not fit. */
function cutInto(r: Region, times: readonly number[], n: number): Region[] | null {
  const parts: Region[] = [];
  let rest = r;
  for (let i = 1; i < n; i++) {
    const at = clampCut(rest, times[Math.floor((i * times.length) / n)]!);
    if (at === null || at <= rest.lo) return null;
    const [below, above] = splitAt(rest, at);
    parts.push(below);
    rest = above;
  }
  return [...parts, rest];
}

function exactSample(events: readonly SeenEvent[]): Sample {
  return { trust: 'exact', points: events.map((e) => e.timeMs), ids: events.map((e) => e.id), perPoint: 1 };
}

/**
 * A full answer read as a sample of unknown bias: each point stands for the events its chunk
 * probably held, at least a cap and a bit more, more when two answers in a row share few events.
 */
/** `held`: the stored events of a chunk read by them (`STORED_FULL`), else null. */
function estimateSample(
  t: WalkTask,
  events: readonly SeenEvent[],
  chunk: Region,
  cap: number,
  held: number | null = null,
): Sample {
  const before = t.sample?.trust === 'stored' ? null : t.sample;
  const first = t.reach === null && t.fullAnswers === 0 && t.rate === null && before === null;
  // A chunk that held most of a cap in stored events holds about as many as those, or the cap, and
  // the few new since: more than a cap only by that much.
  let estimate =
    held !== null
      ? RECOUNT_MARGIN * Math.max(cap, events.length, held)
      : (first ? FIRST_GROWTH : FULL_GROWTH) * Math.max(cap, events.length);
  if (before) {
    const inside = before.ids.filter((_, i) => before.points[i]! > chunk.lo && before.points[i]! < chunk.hi);
    const ids = new Set(events.map((e) => e.id));
    const both = inside.filter((id) => ids.has(id)).length;
    if (inside.length > 0) estimate = Math.max(estimate, chapman(inside.length, events.length, both));
  }
  return {
    trust: 'estimate',
    points: whereIn(events, chunk).map(Math.floor),
    ids: events.map((e) => e.id),
    perPoint: estimate / events.length,
  };
}

/** Stored events inside `chunk` (each point stands for `perPoint`). */
function storedIn(stored: Sample | null, chunk: Region): number {
  return stored === null ? 0 : stored.points.filter((p) => p > chunk.lo && p < chunk.hi).length * stored.perPoint;
}

/**
 * The stored events a proven chunk counted again, and how many more its answer held (fewer when
 * events were deleted since): what `storedFit` learns the catalog's change from. Null when the
 * chunk holds no stored stretch.
 */
export function recountOf(t: WalkTask, events: readonly SeenEvent[]): Recount | null {
  if (t.stored === null) return null;
  const chunk = walkQuery(t);
  const stored = storedIn(t.stored, chunk);
  // Each point stands for `perPoint` stored events, so one chunk's stored count is off by up to that
  // many; but a chunk ends where the next begins, so the errors cancel in the read's sum, which is
  // what the fit learns from. Differences below `perPoint` dropped, a read of a catalog 1% new
  // counted 6 of 100 new events, and its chunks were sized for a catalog that had not changed.
  return { stored, added: events.length - stored };
}

/** The answer holds at least the stored events its chunk held when a read proved them (within a point): it looks complete. */
export function holdsStored(t: WalkTask, events: readonly SeenEvent[]): boolean {
  const recount = recountOf(t, events);
  return recount !== null && recount.stored > 0 && recount.added > -t.stored!.perPoint;
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
    const next = afterProof(t, events, s);
    return {
      next: next ? [next] : [],
      crowded: null,
      proven: events.length,
      guess: tested && { order: tested, held: true },
    };
  }
  const verdict = tested && { order: tested, held: false };
  const parts = cutInThirds(t, events, s, probedFull);
  if (parts) return { next: parts, crowded: null, proven: 0, guess: verdict };
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
