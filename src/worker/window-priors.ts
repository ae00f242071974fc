/**
 * What is already stored says where a window's events are before its first answer: its own events
 * on a re-read, or the event rate just outside it when a neighbouring stretch was proven complete,
 * or else of the proven stretch of the stream nearest to it.
 * Either lets the first query be sized instead of asking the whole window.
 */
import { streamProofs } from '../db/coverage.js';
import type { Db } from '../db/connection.js';
import { storedEventTimes } from '../db/earthquake-events.js';
import { countEvents } from '../db/queries/plan.js';
import { covers, type Proof } from '../domain/proofs.js';
import { DAY_MS, SECOND_MS } from '../domain/time.js';
import type { Rate, WindowKnowledge } from '../planning/truncation/index.js';
import type { EarthquakeWindowJob } from '../planning/work.js';

/** Points a refresh sizes its chunks from: at most this many, each standing for the events between. */
const MAX_STORED_POINTS = 2000;
/** How far outside the window a proven stretch is counted for its rate. */
const NEIGHBOUR_MS = 2 * DAY_MS;
/** A neighbour's rate is used only when it rests on this many events (fewer say little). */
const MIN_NEIGHBOUR_EVENTS = 50;

/** A window counts as proven when its proofs leave no gap of more than a second (its widened ends). */
const covered = (proofs: readonly Proof[], lo: number, hi: number): boolean => covers(proofs, lo, hi, SECOND_MS);

type Priors = Pick<WindowKnowledge, 'stored' | 'rate'>;

export async function windowPriors(db: Db, job: EarthquakeWindowJob): Promise<Priors> {
  const proofs = await streamProofs(db, job.streamKey);
  const { windowStartMs: start, windowEndMs: end } = job;
  if (covered(proofs, start, end)) {
    // Only a window proven whole: a stretch with no stored events is then a quiet one, not one never read.
    const times = await storedEventTimes(db, job.filters, start - SECOND_MS, end + SECOND_MS);
    if (times.length === 0) return {};
    const perPoint = Math.ceil(times.length / MAX_STORED_POINTS);
    return { stored: { points: times.filter((_, i) => i % perPoint === perPoint - 1 || perPoint === 1), perPoint } };
  }
  const beside: Array<readonly [number, number]> = [
    [end, end + NEIGHBOUR_MS],
    [start - NEIGHBOUR_MS, start],
  ];
  const neighbours = beside.filter(([lo, hi]) => covered(proofs, lo, hi));
  // The nearest proven stretch may overlap a neighbour just counted: that stretch is not counted again.
  const overlapsCounted = ([lo, hi]: readonly [number, number]) => neighbours.some(([l, h]) => lo <= h && l <= hi);
  const nearest = nearestProven(proofs, start, end).filter((r) => !overlapsCounted(r));
  for (const [lo, hi] of [...neighbours, ...nearest]) {
    const [count = 0] = await countEvents(db, job.filters, [{ startMs: lo, endMs: hi }]);
    if (count >= MIN_NEIGHBOUR_EVENTS) return { rate: neighbourRate(count, hi - lo) };
  }
  return {};
}

/**
 * The stretch of a proof nearest to the window, up to NEIGHBOUR_MS of it, when no neighbour is
 * proven: the same filters elsewhere in the stream say more about the window's density than
 * nothing, and a first chunk sized from it costs no more than asking the whole window, whose
 * answer is full anyway when the window holds more than a cap.
 */
function nearestProven(proofs: readonly Proof[], start: number, end: number): Array<readonly [number, number]> {
  const distance = (p: Proof) => (p.hi < start ? start - p.hi : p.lo > end ? p.lo - end : 0);
  const outside = proofs.filter((p) => (p.hi < start || p.lo > end) && p.hi - p.lo >= NEIGHBOUR_MS / 2);
  const best = outside.reduce<Proof | null>((b, p) => (b === null || distance(p) < distance(b) ? p : b), null);
  if (best === null) return [];
  return [
    best.hi < start
      ? [Math.max(best.lo, best.hi - NEIGHBOUR_MS), best.hi]
      : [best.lo, Math.min(best.hi, best.lo + NEIGHBOUR_MS)],
  ];
}

/** A neighbour's count, weighed as half a chunk's: the window's own first count soon outweighs it. */
function neighbourRate(events: number, ms: number): Rate {
  const scale = Math.min(1, 100 / events);
  return { events: events * scale, ms: ms * scale };
}
