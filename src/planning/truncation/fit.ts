/**
 * What a walk's chunk is sized for: the sizing cap (cap.ts), and how many stored events a chunk
 * sized from them may hold. Stored events are counted again by each proof of a re-read, and the
 * share of events new since they were stored (late reports, revisions, less deletions) sets how
 * close to the cap such a chunk may go: a catalog that changed little is re-read in chunks of about
 * 194 of 200, one that changed more in smaller ones. A read starts from the share earlier reads of
 * the gateway counted where that is above its own prior (`learnedShare`).
 */
import type { Recount } from './frontier.js';

/** Events an exact chunk leaves out below the cap: ties, and gateways that keep nearly that order. */
export function exactMargin(cap: number): number {
  return Math.min(3, Math.floor(cap / 20));
}

/**
 * Before a read has counted stored events again, it expects this share of them new, weighed as this
 * many stored events counted: its first chunks aim at 93% of the cap. A weight of 200 learned too
 * slowly to pay on a catalog that did not change; 50 asked chunks too large early where 3% was new.
 */
const PRIOR_NEW_SHARE = 0.03;
const PRIOR_WEIGHT = 100;
/**
 * A share learned by earlier reads of the gateway (`learnedShare`) above the prior's stands in for
 * it, weighed as this many stored events counted: enough to size the first chunks, little enough
 * that a read whose catalog changed less than the last ones' follows its own recounts from its
 * first chunk. Where 10% was new, a share learned before (6 to 20%) saves 2 to 3% of the calls; where
 * less was new than learned, it costs up to 0.9% more (3% new, 20% learned). Weighed as 50 to 200,
 * the same saving, and what a stale share costs grows with the weight (`npx tsx bench/re-reads.ts`).
 *
 * A share learned below the prior's is not used: the prior also leaves room for how unevenly new
 * events fall between chunks, and a learned 1% in its place cost 0.2% more calls where 1% was new.
 */
const LEARNED_WEIGHT = 25;

/** Standard deviations of the new events a chunk sized from stored events leaves room for. */
const NEW_SPREAD = 2;

/** What a chunk is sized for: the sizing cap, and how many stored events a chunk may hold (`storedFit`). */
export interface Fit {
  cap: number;
  stored: number;
}

/**
 * How many stored events a chunk may hold and still come back below the cap: the most k whose count,
 * k stored events and the new ones the recounts expect (with NEW_SPREAD deviations of them), stays
 * within the cap less the exact margin.
 */
function storedFit(cap: number, recount: Recount, learned: number | null): number {
  const estimate = (prior: number, weight: number) =>
    Math.max(0, prior * weight + recount.added) / (weight + recount.stored);
  // A learned share stands in for the prior only where it expects more new events: weighed less, one
  // just above the prior's would otherwise expect fewer once recounts come in, and size chunks larger
  // than nothing learned would.
  const own = estimate(PRIOR_NEW_SHARE, PRIOR_WEIGHT);
  const share = learned !== null && learned > PRIOR_NEW_SHARE ? Math.max(own, estimate(learned, LEARNED_WEIGHT)) : own;
  const room = cap - exactMargin(cap);
  let k = Math.floor(room / (1 + share));
  while (k > 1 && k * (1 + share) + NEW_SPREAD * Math.sqrt(k * share) > room) k--;
  return Math.max(1, k);
}

/**
 * The fit of sizing cap `cap` after `recount` (nothing counted again by default), from the share of
 * new events earlier reads learned (`learned`, null: none known).
 */
export function fitOf(cap: number, recount: Recount = { stored: 0, added: 0 }, learned: number | null = null): Fit {
  return { cap, stored: storedFit(cap, recount, learned) };
}

/** Stored points a chunk may take: `fit.stored` events. */
export function storedTake(fit: Fit, perPoint: number): number {
  return Math.max(1, Math.floor(fit.stored / perPoint));
}

/**
 * Stored points the next chunk takes of the `left` still to walk: as many chunks as `storedTake`
 * needs, all of about one size, so that no chunk is a sliver and none sits at the limit.
 */
export function evenTake(left: number, fit: Fit, perPoint: number): number {
  const most = storedTake(fit, perPoint);
  return Math.ceil(left / Math.ceil(left / most));
}
