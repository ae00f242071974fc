/**
 * Placing a walk's chunks: a region covered from one end by chunks sized to come back below the
 * cap. Sizing is the only place an order guess enters. Under the guess that the gateway keeps the
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
import { type Order, type Rate, type Region, type Sample, type SeenEvent, type WalkTask } from './frontier.js';
import { evenTake, exactMargin, storedTake, type Fit } from './fit.js';
import { spreadTimes, unitOf } from './units.js';

/** Share of the cap a chunk sized from rates and estimated samples aims for: counts vary by about 15%. */
export const FILL = 0.8;

/** A full answer says its chunk held at least a cap; as a guess of how many, a bit more. */
export const FULL_GROWTH = 1.25;

/**
 * A whole region's first full answer says only that it holds at least a cap. Read as 1.7 caps, the
 * chunk asked next holds under half its events, so it comes back below the cap while the region
 * holds fewer than two caps, whatever the gateway kept, and its count sizes the rest (recounted).
 * 1.25 here left windows of 330 to 399 events spread over the window at ideal + 3 to + 5; 1.8 and
 * more asked windows of 201 to 260 events with a burst a call more often than 1.7.
 */
export const FIRST_GROWTH = 1.7;

/**
 * A full chunk that held at least this share of a cap in stored events is read by them: it holds a
 * tenth more than they or the cap, where its answer's events lie. 0.5 asked the same calls; 0.9 lost
 * most of the gain (`npx tsx bench/re-reads.ts`).
 */
export const STORED_FULL = 0.8;

/** A chunk asked again after a full answer that no exact sample sizes spans at most this share of it. */
export const MAX_SHRINK = 0.6;

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

export const flip = (from: Order, t: number): number => (from === 'newest' ? t : -t);

/** A region in anchored coordinates (and back: the map is its own inverse). */
export const anchored = (from: Order, r: Region): Region => (from === 'newest' ? r : { lo: -r.hi, hi: -r.lo });

export const ceilSecond = (t: number): number => Math.ceil(t / SECOND_MS) * SECOND_MS;

const descending = (xs: readonly number[]): number[] => [...xs].sort((a, b) => b - a);

/** Where an answer's events to a query of `region` are guessed to lie, whatever unit their times are reported to. */
export const whereIn = (events: readonly SeenEvent[], region: Region): readonly number[] => {
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
export const WHOLE_FILL = 0.9;

/**
 * The same for a rest sized from exact counts alone, no sample: a rate over several chunks varies
 * less than a sample's estimate. 0.97 asked fewer calls than 0.9 in every case that moved (random
 * and magnitude orders, bursts, short windows at a silent cap); 1.0 cost the M2.5+ stream
 * oldest-first 3 calls in 33 (`npx tsx bench/truncation-cases.ts 5`).
 */
const WHOLE_FILL_COUNTED = 0.97;

/** Where in anchored `r` a rate starts counting: not below `quiet` (`WalkTask.quietPast`, anchored). */
const ratedFrom = (r: Region, quiet: number | null): number => Math.max(r.lo, quiet ?? r.lo);

/** The ms of anchored `r` a rate counts. */
const ratedMs = (r: Region, quiet: number | null): number => Math.max(0, r.hi - ratedFrom(r, quiet));

function wholeFits(r: Region, fit: Fit, rate: number | null, sample: Sample | null, quiet: number | null): boolean {
  if (sample?.trust === 'exact') return false;
  const byRate = rate === null ? 0 : rate * ratedMs(r, quiet);
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

function inHalves(
  r: Region,
  fit: Fit,
  rate: number | null,
  sample: Sample | null,
  fullReach: number | null,
  quiet: number | null,
): boolean {
  if (sample?.trust !== 'estimate' || fullReach !== null || rate === null) return false;
  const expected = rate * ratedMs(r, quiet);
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
export function seenFrom(from: Order, region: Region, sample: Sample | null): Seen | null {
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
export function exactCutFits(events: readonly SeenEvent[], from: Order, chunk: Region, fit: Fit): boolean {
  const times = events.map((e) => e.timeMs);
  const unit = unitOf(times);
  if (unit <= SECOND_MS) return true;
  const x = exactReach(fit, descending(times.map((t) => flip(from, t))), unit);
  return x === null || x <= anchored(from, chunk).hi - 2 * SECOND_MS;
}

/**
 * Where the next chunk of anchored region `r` should reach: the lowest point above which the
 * estimate stays within the target. `fullReach`: after a full answer, the chunk must end strictly
 * above this anchored point (it is asked smaller); `shrinkMs`: and span at most this much. `quiet`:
 * the rate counts nothing below this anchored point (`WalkTask.quietPast`).
 */
export function place(
  r: Region,
  fit: Fit,
  rate: number | null,
  seen: Seen | null,
  fullReach: number | null,
  shrinkMs: number | null,
  quiet: number | null = null,
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
    const atRate = rate ? r.hi - target / rate : null;
    // Where the rate reaches the target only inside the quiet stretch, it bounds nothing short of the region's end.
    const byRate = atRate !== null && quiet !== null && atRate < quiet ? r.lo : atRate;
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
    // Stored events are the best measure there is; every other sample is trusted only as far as the rate agrees.
    const trustPoints = sample?.trust === 'stored' && byPoints !== null;
    const candidates = (trustPoints ? [byPoints] : [byRate, byPoints]).filter((v): v is number => v !== null);
    x = candidates.length > 0 ? Math.max(...candidates) : null;
  }
  const half = inHalves(r, fit, rate, sample, fullReach, quiet);
  // After a full answer whose points said nothing of the region, halve it: where its events lie is unknown.
  if (half || (coarse && fullReach !== null && (x === null || x >= r.hi - 2 * SECOND_MS)))
    x = (ratedFrom(r, quiet) + r.hi) / 2;
  const lowest = fullReach === null ? r.lo : fullReach + SECOND_MS;
  const shrunk = shrinkMs === null ? lowest : Math.max(lowest, r.hi - shrinkMs);
  if (x === null || (fullReach === null && !half && (x <= r.lo || wholeFits(r, fit, rate, sample, quiet))))
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
 * when given, else the events stored there (`stored`, the stored sample by default); the rate counts
 * nothing past `quietPast` (`WalkTask.quietPast`).
 */
export function startWalk(
  region: Region,
  from: Order,
  fit: Fit,
  rate: Rate | null,
  sample: Sample | null,
  stored: Sample | null = sample?.trust === 'stored' ? sample : null,
  quietPast?: number,
): WalkTask {
  const task = withQuietPast<WalkTask>(
    {
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
    },
    quietPast,
  );
  sample = task.sample;
  const a = anchored(from, region);
  const p = place(a, fit, perMs(rate), seenFrom(from, region, sample), null, null, quietOf(from, quietPast));
  if (p === 'crowded' || p.reach === null) return task;
  return { ...task, reach: flip(from, p.reach), guessed: p.guessed };
}

/** `t` with `quietPast` set, or as it is where there is none. */
export const withQuietPast = <T extends WalkTask>(t: T, quietPast: number | undefined): T =>
  quietPast === undefined ? t : { ...t, quietPast };

/** `quietPast` (real coordinates) as `place` reads it: anchored for a walk from `from`, or null. */
export const quietOf = (from: Order, quietPast: number | undefined): number | null =>
  quietPast === undefined ? null : flip(from, quietPast);

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
export function looksBeside(
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

export const other = (o: Order): Order => (o === 'newest' ? 'oldest' : 'newest');
