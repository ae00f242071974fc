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
export function nextProbeRegion(c: Cap): { lo: number; hi: number } {
  return probeRegionAt(c, c.probes.length);
}

function probeRegionAt(c: Pick<Cap, 'probeRegions'>, k: number): { lo: number; hi: number } {
  return c.probeRegions[Math.min(k, c.probeRegions.length - 1)]!;
}

const inside = (r: { lo: number; hi: number }, o: { lo: number; hi: number }) => o.lo <= r.lo && r.hi <= o.hi;

/**
 * An unfiltered stream's answer in question, of `size` events to a query of `region`: a probe place
 * inside that region could only give as many or fewer (the same cap, fewer events), so it can
 * neither prove the answer nor measure the cap beside it. The answer takes the first such place's
 * turn as a probe of its own region, and the other places inside it are dropped.
 */
export function answerAsProbe(c: Cap, size: number, region: { lo: number; hi: number }): Cap {
  const asked = c.probeRegions.slice(0, c.probes.length);
  const left = c.probeRegions.slice(c.probes.length);
  if (!c.unfiltered || !left.some((r) => inside(r, region))) return c;
  const rest = left.filter((r) => !inside(r, region));
  return afterProbe({ ...c, probeRegions: [...asked, region, ...rest] }, size);
}

/** Abutting months share their end second (inclusive ends): more than that makes them one place. */
const apart = (a: { lo: number; hi: number }, b: { lo: number; hi: number }) =>
  Math.min(a.hi, b.hi) - Math.max(a.lo, b.lo) <= SECOND_MS;

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
