/**
 * The gateway's cap as one window read knows it, and the rules that use it. The spec fixes only
 * the ceiling of `max_results` (200); a gateway may cap lower without saying so.
 *
 * - `floor` decides proofs. It is the largest answer this gateway is known to have given (in this
 *   read, or shared by other reads within GATEWAY_KNOWLEDGE_TTL_MS), so a proven lower bound on the
 *   cap: an answer below it holds every event its query matched; one at or above it is *full*.
 * - A full answer below max_results leaves the cap *in question* unless the cap was measured at
 *   or above its size: it may be complete, or the gateway may cap that low. It is held on its task
 *   while cap probes (unfiltered queries where events are likely many: `probeRegions`, in turn)
 *   ask. A probe larger than the answer raises the floor above it: a proof. A probe no larger says
 *   nothing alone (a sparse month), and the next place is probed; two probes of the same size
 *   (MIN_SIZING_CAP or more) *measure* the cap. With every place asked, the answer counts as full.
 * - The *sizing cap* decides how large a chunk is asked: max_results, unless the cap was measured
 *   lower and nothing larger was seen since (or this read's probes could not tell: then its floor).
 *   A cap measured before the TTL lapsed still sizes chunks (a `hint`) until an answer passes it:
 *   a gateway that capped at 100 an hour ago most likely still does, and if not, the first probe says so.
 *   A small floor never sizes a chunk: with nothing known the floor is 1, and chunks sized for it
 *   would hold less than one event.
 */
import * as z from 'zod';
import { LIMITS } from '../../domain/spec.js';
import { SECOND_MS } from '../../domain/time.js';

export const MAX_RESULTS = LIMITS.maxResultsCeiling;
/** Probes of fewer events than this measured sparse months, not a cap worth sizing for. */
export const MIN_SIZING_CAP = 10;

const probeRegionSchema = z.strictObject({ lo: z.number().int(), hi: z.number().int() });
type Region = z.infer<typeof probeRegionSchema>;

export const capSchema = z.strictObject({
  floor: z.number().int().min(1),
  /** The cap as measured (two probes of one size, here or by another read within the TTL), or null. */
  measured: z.number().int().positive().nullable(),
  /** The cap last measured, however long ago: it sizes chunks until the floor passes it, proves nothing. */
  hint: z.number().int().positive().nullable(),
  /** Sizes of the probes this read asked, in order: the next one asks `probeRegions[probes.length]`. */
  probes: z.array(z.number().int().nonnegative()),
  /** Where probes ask, in turn: where the largest answer known was seen, then months around the window and now. */
  probeRegions: z.array(probeRegionSchema).min(1),
  /** When the read that holds this floor began: a read resumed after the TTL learns the cap again. */
  seenAtMs: z.number(),
  /**
   * The stream asks with no filters: its own answers are what probes of their regions would give.
   * Absent in caps saved before it was kept: false, every probe asked as before.
   */
  unfiltered: z.boolean().default(false),
});
export type Cap = z.infer<typeof capSchema>;

/** What one reader tells the others of the cap (gateway_knowledge, within the TTL). */
export interface SharedCap {
  floor: number;
  measured: number | null;
}

/** An answer of `size` events is full: it may hold fewer events than its query matched. */
export function isFull(size: number, floor: number): boolean {
  return size > 0 && size >= floor;
}

/**
 * What chunks are sized for: max_results, unless the cap was measured lower and nothing larger seen
 * since, or this read asked every probe it could without telling (then its floor: the best guess).
 */
export function sizingCap(c: Pick<Cap, 'floor' | 'measured' | 'hint' | 'probes' | 'probeRegions'>): number {
  if (c.floor >= MAX_RESULTS) return MAX_RESULTS;
  const measured = c.measured ?? c.hint;
  if (measured !== null && measured >= c.floor && measured >= MIN_SIZING_CAP) return measured;
  const untold = c.probes.length >= c.probeRegions.length;
  return untold && c.floor >= MIN_SIZING_CAP ? c.floor : MAX_RESULTS;
}

/**
 * The cap is known: max_results seen, measured, or every probe asked. Until then each chunk in
 * flight may come back full for nothing, so a read does not cut its walks into lanes.
 */
export function capKnown(c: Cap): boolean {
  return c.floor >= MAX_RESULTS || c.measured !== null || c.probes.length >= c.probeRegions.length;
}

/** A full answer this large leaves the cap in question: a probe may still show it a proof. */
export function inQuestion(c: Cap, size: number): boolean {
  const unmeasured = c.measured === null || size > c.measured;
  return isFull(size, c.floor) && size < MAX_RESULTS && unmeasured && c.probes.length < c.probeRegions.length;
}

/** The cap after an answer of `size`: the floor rises to it. */
export function afterAnswer(c: Cap, size: number): Cap {
  return size > c.floor ? { ...c, floor: size } : c;
}

/**
 * The cap after a probe of `size` events: the floor at least that, measured when an earlier probe
 * gave as many, or the cap last measured (the hint) was that.
 */
export function afterProbe(c: Cap, size: number): Cap {
  // Overlapping regions may hold the same events: only a place of its own gives the cap's size again.
  const region = nextProbeRegion(c);
  const elsewhere = c.probes.some((p, i) => p === size && apart(probeRegionAt(c, i), region));
  const again = size >= MIN_SIZING_CAP && (elsewhere || c.hint === size);
  const measured = again || size >= MAX_RESULTS ? size : c.measured;
  return { ...c, floor: Math.max(c.floor, size), measured, probes: [...c.probes, size] };
}

/** Where the next probe asks. */
export function nextProbeRegion(c: Cap): Region {
  return probeRegionAt(c, c.probes.length);
}

function probeRegionAt(c: Pick<Cap, 'probeRegions'>, k: number): Region {
  return c.probeRegions[Math.min(k, c.probeRegions.length - 1)]!;
}

/** The probes this read asked: where, and how many events each answer held. */
export function askedProbes(c: Cap): Array<{ region: Region; size: number }> {
  return c.probes.map((size, i) => ({ region: probeRegionAt(c, i), size }));
}

const inside = (r: Region, o: Region) => o.lo <= r.lo && r.hi <= o.hi;

/** At most this many probe places per read: what one read's probes may cost. */
export const MAX_PROBE_PLACES = 4;

/**
 * An unfiltered stream's answer in question, of `size` events at `times` to a query of `region`.
 * The side of the region its events leave quiet (`quietSide`) is the next place probed: a single
 * event there that the answer lacks measures the cap (`measuredByOverflow`). A probe place inside
 * the region could only give as many events or fewer (the same cap, fewer events), so it cannot
 * measure the cap beside the answer: the answer takes the first such place's turn as a probe of its
 * own region, and the other places inside it are dropped.
 *
 * An answer that looks complete (`expected`: it holds as many events as the read's stored events
 * led it to expect there, or fewer than the cap last measured) is probed where a larger answer is
 * likelier first: its quiet side then holds nothing it lacks, and a probe there would say nothing,
 * where one larger answer settles it and every other read's answer below it. One as large as the
 * cap last measured is probably capped: its quiet side first, whose probe, full, also shows the
 * walk where the rest lies (asked elsewhere first, 0.9% more calls newest-first). Placing only.
 */
export function answerAsProbe(
  c: Cap,
  size: number,
  region: Region,
  times: readonly number[] = [],
  expected = false,
): Cap {
  if (!c.unfiltered) return c;
  const asked = c.probeRegions.slice(0, c.probes.length);
  const left = c.probeRegions.slice(c.probes.length);
  const rest = left.filter((r) => !inside(r, region));
  const quiet = quietSide(region, times);
  const taken = rest.length < left.length;
  const later = expected || (c.hint !== null && size < c.hint);
  const first = later ? rest.slice(0, 1) : [];
  const places = [
    ...asked,
    ...(taken ? [region] : []),
    ...first,
    ...(quiet ? [quiet] : []),
    ...rest.slice(first.length),
  ];
  const next = { ...c, probeRegions: places.slice(0, Math.max(MAX_PROBE_PLACES, asked.length + 1)) };
  return taken ? afterProbe(next, size) : next;
}

/**
 * The part of an answer's query its events leave quiet, a second in from each end: the side away
 * from them, when it is at least as long as the stretch they span (a gateway keeping the newest or
 * the oldest leaves its events crowding one end; a complete answer lies spread over its query).
 * Probed there, a capped dense answer is settled by one call, where a month elsewhere at the edge of
 * the data may hold nothing.
 */
export function quietSide(region: Region, times: readonly number[]): Region | null {
  // An answer too small to size chunks by (MIN_SIZING_CAP) has no side to crowd: its cap is settled elsewhere.
  if (times.length < MIN_SIZING_CAP) return null;
  const first = Math.min(...times);
  const last = Math.max(...times);
  const below = { lo: region.lo + SECOND_MS, hi: first - SECOND_MS };
  const above = { lo: last + SECOND_MS, hi: region.hi - SECOND_MS };
  const side = below.hi - below.lo >= above.hi - above.lo ? below : above;
  const length = side.hi - side.lo;
  return length >= SECOND_MS && length >= last - first ? side : null;
}

/**
 * After a probe of `asked`, strictly inside `query`, whose answer of `size` events is held in
 * question (an unfiltered stream: the probe asks what the query asked): a probe event the answer
 * lacks, a second or more inside the query, shows the query matched more than `size` events, so by
 * the one assumption the cap is `size`. Measured, not guessed: no second place is needed.
 */
export function measuredByOverflow(
  c: Cap,
  held: { query: Region; size: number; ids: ReadonlySet<string> },
  asked: Region,
  events: ReadonlyArray<{ id: string; timeMs: number }>,
): Cap {
  const { query, size, ids } = held;
  const within = (t: number) => t >= query.lo + SECOND_MS && t <= query.hi - SECOND_MS;
  if (!c.unfiltered || c.measured !== null || !within(asked.lo) || !within(asked.hi)) return c;
  const more = events.some((e) => !ids.has(e.id) && within(e.timeMs));
  return more ? { ...c, floor: Math.max(c.floor, size), measured: size } : c;
}

/**
 * An answer to a chunk asked again after an answer at the floor (`full`: that answer's events, to
 * the stream's own query, whose span held the chunk): an event it holds that the full answer lacked,
 * a second inside that answer's span, matched the full answer's query too. That query so matched
 * more than the floor and returned the floor: by the one assumption the cap is the floor. Measured
 * without a probe, also where probes cannot tell (their places too sparse, a filtered stream). Were
 * the event added to the catalog between the two calls, the cap measured is too low: chunks are
 * sized smaller than they could be, and no proof changes (proofs rest on the floor).
 */
export function measuredByRepeat(
  c: Cap,
  full: { ids: readonly string[]; points: readonly number[] } | null,
  events: ReadonlyArray<{ id: string; timeMs: number }>,
): Cap {
  if (c.measured !== null || full === null || full.ids.length !== c.floor || c.floor < MIN_SIZING_CAP) return c;
  const lo = Math.min(...full.points) + SECOND_MS;
  const hi = Math.max(...full.points) - SECOND_MS;
  const seen = new Set(full.ids);
  return events.some((e) => !seen.has(e.id) && e.timeMs >= lo && e.timeMs <= hi) ? { ...c, measured: c.floor } : c;
}

/** Abutting months share their end second (inclusive ends): more than that makes them one place. */
const apart = (a: Region, b: Region) => Math.min(a.hi, b.hi) - Math.max(a.lo, b.lo) <= SECOND_MS;

/**
 * What other reads learned meanwhile (shared within the TTL): a higher floor or a measured cap.
 * Never lowers the floor: within its TTL it is a proof.
 */
export function withShared(c: Cap, shared: SharedCap): Cap {
  // A cap measured within the TTL was an answer that large: the floor is at least that, or an
  // answer below it but at a floor learned apart from it would count as full and be asked again.
  const floor = Math.max(c.floor, shared.floor, shared.measured ?? 1);
  return { ...c, floor, measured: c.measured ?? shared.measured };
}

export function capText(c: Cap): string {
  const probes = c.probes.length === 0 ? 'no probe' : `probes of ${c.probes.join(', ')}`;
  const measured = c.measured === null ? '' : `, measured ${c.measured}`;
  return `cap floor ${c.floor}${measured}, chunks sized for ${sizingCap(c)} (${probes})`;
}
