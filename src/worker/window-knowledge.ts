/**
 * What a window read knows before its first call, read from the database: the gateway facts
 * shared by every reader, the stream's proofs, the events stored in the window's proven parts and
 * the rate of proven stretches near it. The rules that turn them into the read's knowledge are
 * pure, in planning/truncation/knowledge.ts.
 */
import { streamProofs } from '../db/coverage.js';
import type { Db } from '../db/connection.js';
import { storedEventTimes } from '../db/earthquake-events.js';
import { countEvents, earthquakeStreams } from '../db/queries/plan.js';
import type { Proof } from '../domain/proofs.js';
import { SECOND_MS } from '../domain/time.js';
import {
  hintBackedBy,
  MIN_NEARBY_EVENTS,
  nearbyStretches,
  preferOf,
  provenWithin,
  windowKnowledge,
  type Rate,
  type ReadKind,
  type WindowKnowledge,
} from '../planning/truncation/index.js';
import { isWiderOrEqual } from '../planning/density.js';
import type { EarthquakeWindowJob } from '../planning/work.js';
import type { ProcessorDeps } from './deps.js';
import { sharedFacts } from './gateway-facts.js';

/** Share of windows that walk under an order guess although the hint says the gateway keeps none: gateways change. */
const EXPLORE = 0.1;

/** Proofs of the streams whose filters take in every event of `job`'s: their stored events are complete there too. */
async function widerProofs(db: Db, job: EarthquakeWindowJob): Promise<Proof[]> {
  const streams = await earthquakeStreams(db);
  const wider = streams.filter((s) => s.streamKey !== job.streamKey && isWiderOrEqual(s.filters, job.filters));
  return (await Promise.all(wider.map((s) => streamProofs(db, s.streamKey)))).flat();
}

/**
 * `resume`: a saved read taken up again keeps its scope and walks, so only the cap, the hints and
 * the nearby rate are read.
 */
export async function readWindowKnowledge(
  deps: ProcessorDeps,
  job: EarthquakeWindowJob,
  read: ReadKind | 'resume',
): Promise<WindowKnowledge> {
  const facts = await sharedFacts(deps);
  const proofs = await streamProofs(deps.db, job.streamKey);
  const storedProofs = read === 'resume' ? proofs : [...proofs, ...(await widerProofs(deps.db, job))];
  const { windowStartMs: start, windowEndMs: end } = job;
  // Stored events size chunks only inside proven parts.
  const known = read === 'resume' ? [] : provenWithin(storedProofs, start, end);
  const storedTimes =
    known.length > 0 ? await storedEventTimes(deps.db, job.filters, start - SECOND_MS, end + SECOND_MS) : [];
  return windowKnowledge({
    window: { startMs: start, endMs: end },
    nowMs: Date.now(),
    read: read === 'resume' ? { kind: 'first' } : read,
    facts: {
      capFloor: facts.capFloor,
      measured: facts.measuredCap,
      measuredBefore: facts.measuredCapBefore,
      capRegion: facts.capRegion,
      prefer: preferOf(facts.orderStats),
      hintBacked: hintBackedBy(facts.orderStats),
      recounted: facts.recounted,
    },
    explore: Math.random() < EXPLORE,
    circleCuts: job.filters.circle === null,
    unfiltered: job.filters.circle === null && job.filters.minMagnitude === null,
    proofs,
    storedProofs,
    storedTimes,
    nearby: await nearbyRate(
      deps.db,
      job,
      [...storedProofs].sort((a, b) => a.lo - b.lo),
    ),
  });
}

/**
 * The event rate of the first proven stretch near the window that holds enough events (knowledge.ts
 * `nearbyStretches`): it sizes a chunk only after the window's own full answer.
 */
async function nearbyRate(db: Db, job: EarthquakeWindowJob, proofs: readonly Proof[]): Promise<Rate | null> {
  for (const [lo, hi] of nearbyStretches(proofs, { startMs: job.windowStartMs, endMs: job.windowEndMs })) {
    const [count = 0] = await countEvents(db, job.filters, [{ startMs: lo, endMs: hi }]);
    if (count >= MIN_NEARBY_EVENTS) return { events: count, ms: hi - lo };
  }
  return null;
}
