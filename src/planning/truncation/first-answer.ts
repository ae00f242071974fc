/**
 * A whole region's first full answer, when its events reach neither end, or a guess it placed
 * fails: plans that ask the region by where that answer's events lie, rather than a walk sized from
 * a rate, and read the next answer for which order the gateway keeps (docs/design.md, "How a window
 * is covered").
 */
import { SECOND_MS } from '../../domain/time.js';
import {
  clampCut,
  cutAt,
  mergeEvents,
  splitAt,
  type Order,
  type Rate,
  type Region,
  type Sample,
  type SeenEvent,
  type WalkTask,
} from './frontier.js';
import { exactMargin, type Fit } from './fit.js';
import { unitOf } from './units.js';
import {
  anchored,
  ceilSecond,
  chapman,
  FILL,
  flip,
  FULL_GROWTH,
  looksBeside,
  other,
  perMs,
  type Sizing,
  startWalk,
  walkQuery,
  WHOLE_FILL,
  whereIn,
  withQuietPast,
} from './place.js';
import { estimateSample, exactSample, leftOver, recounted } from './sample.js';

/**
 * The rest of a region whose outer part (`outerPartFirst`) was proven. Its other events all past the
 * answer's near end (the guessed order): the rest holds the answer's events there and no others, and
 * is asked whole. None but the answer's (the other order that keeps an end): the unseen events lie past
 * the answer's far end, and the rest is cut where the answer's events end, each stretch below the cap
 * while the region holds fewer than two caps; asked whole, it came back full from a third of a cap
 * unseen. Others among them (a subset kept at random): whole where the answer's events there,
 * counted as the proof counted its own, stay within a chunk's fill, else the first answer's thirds.
 */
export function restInParts(t: WalkTask, events: readonly SeenEvent[], rest: Region, fit: Fit): WalkTask[] {
  const sample = t.sample!;
  const counted = recounted(leftOver(sample, rest) ?? sample, sample, walkQuery(t), events.length);
  const left = showsFarEnd(t, events) ? { ...counted, perPoint: 1 } : counted;
  const inside = left.points.filter((p) => p > rest.lo && p < rest.hi).length;
  const chunk = walkQuery(t);
  // A stretch holding nearly all of the answer's events would come back full, whatever it was read as.
  const fewer = inside <= sample.points.length - exactMargin(fit.cap);
  // An outer part that held none of the answer's events says nothing of where the unseen ones lie.
  const past = fewer && sample.points.some((p) => p > chunk.lo && p < chunk.hi) && newEvents(t, events).length === 0;
  const whole = !past && fewer && inside * left.perPoint <= FILL * fit.cap;
  const within = (c: number) => c > rest.lo + SECOND_MS && c < rest.hi - SECOND_MS;
  const parts = whole ? [rest] : cutAt(rest, (past ? [pastSample(t)] : (t.restCuts ?? [])).filter(within));
  return askedWhole(t, parts, fit, left);
}

/**
 * The rest of a turned walk (`turnAtFarEnd`) after its first chunk was proven: the answer's events
 * left there are every event down to the farthest of them, under the order the proof just showed,
 * and past them lies what no answer has shown. Two parts, each asked whole: the known events, below
 * the cap, and the stretch past them, which a walk sized from the known events' rate crossed a chunk
 * at a time where it was quiet (a window reaching past the data). Null where few are known.
 */
export function knownAndPast(t: WalkTask, rest: Region, fit: Fit, rate: Rate): WalkTask[] | null {
  const known = t.sample!.points.filter((p) => p > rest.lo && p < rest.hi).length;
  if (known < (FILL * fit.cap) / 2 || known > fit.cap - exactMargin(fit.cap)) return null;
  const cut = pastSample(t);
  if (cut <= rest.lo + SECOND_MS || cut >= rest.hi - SECOND_MS) return null;
  const past = t.from === 'newest' ? cut - rest.lo : rest.hi - cut;
  const whole = known + perMs(rate)! * past <= WHOLE_FILL * fit.cap;
  return askedWhole(t, whole ? [rest] : cutAt(rest, [cut]), fit, t.sample);
}

/**
 * Whether the proof found events the walk's sample lacked, all nearer the walk's end than the whole
 * sample: what a gateway keeping the far end leaves out of its first answer.
 */
const showsFarEnd = (t: WalkTask, events: readonly SeenEvent[]): boolean => {
  const fresh = newEvents(t, events);
  return fresh.length > 0 && fresh.every((e) => flip(t.from, e.timeMs) > sampleTop(t));
};

const newEvents = (t: WalkTask, events: readonly SeenEvent[]): SeenEvent[] => {
  const ids = new Set(t.sample!.ids);
  return events.filter((e) => !ids.has(e.id));
};

/** Where the sample's events end, seen from the walk's end: a whole second past the farthest of them. */
function pastSample(t: WalkTask): number {
  const points = t.sample!.points;
  return t.from === 'oldest'
    ? ceilSecond(Math.max(...points)) + SECOND_MS
    : Math.floor(Math.min(...points) / SECOND_MS) * SECOND_MS;
}

/** Sample events an outer part must hold for its proof to show an order. */
const SHOWN_BY = 10;

/**
 * The order an outer part's proof shows, as a proof of a guessed chunk does: the far end kept when
 * every event the sample lacked lies past it (`showsFarEnd`), the walk's own end when the part held
 * ten or more of the sample's events and no others (a gateway keeping another order adds events there).
 */
export function partShows(t: WalkTask, events: readonly SeenEvent[]): { order: Order; held: true } | null {
  if (t.restCuts === undefined || t.sample?.trust !== 'estimate') return null;
  if (showsFarEnd(t, events)) return { order: other(t.from), held: true };
  return newEvents(t, events).length === 0 && events.length >= SHOWN_BY ? { order: t.from, held: true } : null;
}

/** The ids of the sample's events inside region `r`. */
const idsInside = (s: Sample, r: Region): string[] =>
  s.ids.filter((_, i) => s.points[i]! > r.lo && s.points[i]! < r.hi);

/** The sample's point nearest the walk's end, anchored. */
const sampleTop = (t: WalkTask): number => Math.max(...t.sample!.points.map((p) => flip(t.from, p)));

/**
 * `t`'s parts as walks of their own, each asked whole (its chunk is the part), what `sample` shows
 * there kept for a full answer's next chunk: counted as asked again after a full answer, so neither
 * cut into lanes before a proof nor placed anew on resume.
 */
function askedWhole(t: WalkTask, parts: readonly Region[], fit: Fit, sample: Sample | null): WalkTask[] {
  return parts.map((r) => ({
    ...startWalk(r, t.from, fit, null, leftOver(sample, r), leftOver(t.stored, r), t.quietPast),
    reach: null,
    fullAnswers: 1,
  }));
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
export function cutInThirds(
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
  const hidden = s.guesses[0];
  if (hidden !== undefined) return [outerPartFirst(t, parts, hidden, sample)];
  // Counted as asked again after a full answer: each part keeps the answer's sample for its next
  // chunk, is cut neither again here nor into lanes before a proof, and is not placed anew on resume.
  const walks = parts.map((r) => ({
    ...startWalk(r, t.from, s, t.rate, leftOver(sample, r), leftOver(t.stored, r)),
    fullAnswers: 1,
  }));
  return t.from === 'newest' ? walks.reverse() : walks;
}

/**
 * The thirds asked one walk at a time, the outer part where the likelier order hides the unseen
 * events first: below the answer when it kept the newest. That part comes back full only when it
 * hides more than two thirds of a cap; its answer then shows which order holds and where its events
 * end (`turnAtFarEnd`), and the walk turns to prove the answer's events and that part's newest in
 * one chunk from the other end. Asked at once, that part's walk cost three calls after the other two
 * parts were proven (a filtered stream's window reaching past the data: ideal + 4).
 */
function outerPartFirst(t: WalkTask, parts: readonly Region[], kept: Order, sample: Sample): WalkTask {
  const restCuts = parts.slice(1).map((r) => r.lo + SECOND_MS);
  return partAtEnd({ ...t, from: other(kept), fullAnswers: 1 }, parts, sample, restCuts);
}

/** `t` asking the part of `parts` at its own end, `sample` sizing what follows, its rest cut at `restCuts` once proven. */
function partAtEnd(t: WalkTask, parts: readonly Region[], sample: Sample, restCuts: number[]): WalkTask {
  const first = t.from === 'oldest' ? parts[0]! : parts.at(-1)!;
  const reach = t.from === 'oldest' ? first.hi : first.lo;
  return { ...t, reach, guessed: false, sample, held: null, restCuts };
}

/**
 * A full answer to a chunk at the walk's own end, holding every event of the walk's sample inside
 * that chunk while the sample also lies beyond it: had the gateway kept the events nearest the
 * walk's end, the chunk would hold none but the sample's (all past it were seen) and be below the
 * cap. So it keeps the far end: the walk turns, the sample beyond the chunk and the answer read as
 * every event from the answer's far end to the region's, and the next chunk is cut just inside them.
 */
export function turnAtFarEnd(t: WalkTask, events: readonly SeenEvent[], s: Sizing): WalkTask | null {
  const sample = t.sample;
  const outerPart = t.restCuts !== undefined && sample?.trust === 'estimate';
  const refuted = t.restCuts === undefined && t.guessed && sample?.trust === 'exact' && t.fullAnswers === 1;
  if (t.reach === null || sample === null || !(outerPart || refuted)) return null;
  const to = other(t.from);
  if (!s.guesses.includes(to) || !showsFarEnd(t, events)) return null;
  const chunk = walkQuery(t);
  const got = new Set(events.map((e) => e.id));
  const inside = idsInside(sample, chunk);
  const beyond = sample.points.flatMap((p, i) =>
    inside.includes(sample.ids[i]!) ? [] : [{ id: sample.ids[i]!, timeMs: p }],
  );
  if (inside.length === 0 || beyond.length === 0 || !inside.every((id) => got.has(id))) return null;
  const turned = startWalk(t.region, to, s, null, exactSample(mergeEvents(events, beyond)), t.stored);
  return turned.reach === null ? null : { ...turned, fullAnswers: t.fullAnswers + 1, restCuts: [] };
}

/**
 * A chunk placed under an order guess from a region's whole first answer came back full: the gateway
 * keeps neither end, and the two answers, read as samples of one set, give the region's count
 * (Chapman). Up to two caps, it is cut in two where the first answer's events lie, each part asked
 * whole: a walk sized from the rate of its first proof went on a chunk at a time into what the first
 * answer had shown quiet (a window reaching past the data, read in random order: ideal + 3 to + 5).
 * More, and the walk goes on as after every other full answer. A gateway ranking by something fixed
 * (magnitude, id) keeps the first answer's events again and gives no count: the half at the walk's
 * end is asked first, and the rest whole once it is proven; came back full, it is walked. Asked at
 * once, both halves of a dense region came back full, 1.7 calls a window more where it reaches past
 * the data (`npx tsx bench/truncation-cases.ts`).
 */
export function refutedInHalves(t: WalkTask, events: readonly SeenEvent[], s: Sizing): WalkTask[] | null {
  const first = t.sample;
  if (!t.guessed || first?.trust !== 'exact' || t.fullAnswers !== 1 || t.restCuts !== undefined) return null;
  // Times reported coarsely may have refuted the guess by ties alone, and say little of where a cut lies.
  if (unitOf(first.points) > SECOND_MS) return null;
  const inChunk = idsInside(first, walkQuery(t));
  if (inChunk.length === 0) return null;
  const got = new Set(events.map((e) => e.id));
  const both = inChunk.filter((id) => got.has(id)).length;
  // Every event of the first in the chunk kept again: a gateway ranking events by something fixed
  // (magnitude, id), whose two answers give no count.
  const fixed = both === inChunk.length;
  if (fixed && showsFarEnd(t, events)) return null;
  const held = Math.max(FULL_GROWTH * s.cap, chapman(inChunk.length, events.length, both));
  const total = (held * first.points.length) / inChunk.length;
  if (!fixed && total > HALVES_UP_TO * s.cap) return null;
  const parts = cutInto(
    t.region,
    [...first.points].sort((a, b) => a - b),
    2,
  );
  if (parts === null) return null;
  const sample: Sample = { ...first, trust: 'estimate', perPoint: total / first.points.length };
  const quiet = withQuietPast(t, quietPastOf(t));
  if (!fixed) return askedWhole(quiet, parts, s, sample);
  // No count: the half at the walk's end first, whose proof says whether the other fits whole.
  return [partAtEnd({ ...quiet, fullAnswers: t.fullAnswers + 1 }, parts, sample, [])];
}

/** In `quietPastOf`: the quiet stretch starts this number of the first answer's average gaps past its events. */
const QUIET_GAPS = 2;

/**
 * Where the region's whole first answer, read exactly under an order guess that this full answer
 * refuted, left the far side quiet: a subset spread over the events (kept at random, by magnitude)
 * lies where they lie, so past its farthest event a few at most remain. Undefined unless the walk
 * had proven nothing yet and the answer's events stop well short of the region's far end. Only a
 * guess: a full answer from a chunk reaching into that stretch drops it (`afterFull`).
 */
export function quietPastOf(t: WalkTask): number | undefined {
  const first = t.sample;
  if (!t.guessed || first?.trust !== 'exact' || t.fullAnswers !== 1 || t.rate !== null || t.restCuts !== undefined)
    return undefined;
  const points = first.points.map((p) => flip(t.from, p));
  const [lowest, highest] = [Math.min(...points), Math.max(...points)];
  const quiet = lowest - (QUIET_GAPS * (highest - lowest)) / Math.max(1, points.length - 1);
  const a = anchored(t.from, t.region);
  return quiet - a.lo > (highest - lowest) / 4 ? flip(t.from, Math.floor(quiet)) : undefined;
}

/**
 * Caps up to which a region that a random subset's two answers count is asked in halves
 * (`refutedInHalves`). 2 where 1.6 put windows reaching past the data over ideal + 2 in 15 of 200
 * where 61, at 1.8 about 30 (`npx tsx bench/truncation-cases.ts`); no other case moved.
 */
const HALVES_UP_TO = 2;

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
