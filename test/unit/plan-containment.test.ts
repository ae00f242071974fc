/**
 * The plan's range holds what the backfill then bills. On generated catalogs (empty, quiet, medium
 * and dense months, aftershock bursts, a crowded second), a fresh database plans a range after N
 * samples placed as `--sample N` places them, with the estimate the planner makes of them; then the
 * backfill runs in the model of test/support/journey-model.ts against the same gateway, whatever
 * order it keeps. Its billed calls, cap probes included, lie within the rounded low and high.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/domain/time.js';
import {
  boundInWindow,
  countedInWindow,
  ratePool,
  samplePieces,
  type SampleCount,
} from '../../src/planning/density.js';
import {
  DEFAULT_ORDER_FACTOR,
  DEFAULT_UNITS_FACTOR,
  earthquakeCost,
  rounded,
  type CapProbe,
} from '../../src/planning/estimate.js';
import { SampleSchedule } from '../../src/planning/samples.js';
import { planWindows } from '../../src/planning/windows.js';
import type { Interval } from '../../src/domain/interval.js';
import { simulatedGateway, type Mode } from '../support/adversary.js';
import { JourneyModel, journeyCatalog, MONTHS, SPAN, T0, type Density } from '../support/journey-model.js';

const modes: Mode[] = ['newest', 'oldest', 'random', 'magnitude', 'id', 'permutation'];
const RUNS = Number(process.env.CONTAINMENT_RUNS ?? 150);

interface Sampled {
  samples: SampleCount[];
  largest: { size: number; region: { lo: number; hi: number } } | null;
}

/** `--sample n` against the gateway, as src/ingest/sample.ts asks: each answer places the next. */
function sample(
  gateway: ReturnType<typeof simulatedGateway>,
  windows: Interval[],
  n: number,
  minMagnitude: number | null,
): Sampled {
  const schedule = new SampleSchedule(windows, n);
  const samples: SampleCount[] = [];
  let largest: Sampled['largest'] = null;
  for (let step = schedule.next(); step !== null; step = schedule.next()) {
    const region = { lo: step.interval.startMs, hi: step.interval.endMs };
    const events = gateway.query({ region, minMagnitude });
    samples.push({ interval: step.interval, events: events.length, full: events.length >= 200 });
    if (events.length > 1 && events.length > (largest?.size ?? 0)) largest = { size: events.length, region };
    const times = events.map((e) => e.timeMs);
    const spanMs = times.length > 1 ? Math.max(...times) - Math.min(...times) : region.hi - region.lo;
    schedule.answered(step, events.length, spanMs);
  }
  return { samples, largest };
}

/** As the planner decides on a fresh database: a probe is due when nothing proved the cap. */
function probeOf(windows: Interval[], minMagnitude: number | null, largest: Sampled['largest']): CapProbe {
  if ((largest?.size ?? 0) >= 200) return 'none';
  const short = windows.some((w) => w.endMs - w.startMs < 7 * DAY_MS);
  return minMagnitude !== null || short ? 'expected' : 'possible';
}

const time = fc.integer({ min: 0, max: SPAN }).map((t) => T0 + t);
const journey = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  densities: fc.array(fc.constantFrom<Density>('empty', 'quiet', 'medium', 'dense'), {
    minLength: MONTHS,
    maxLength: MONTHS,
  }),
  bursts: fc.integer({ min: 0, max: 3 }),
  swarm: fc.integer({ min: 0, max: 7 }).map((x) => x === 0),
  minMagnitude: fc.constantFrom<number | null>(null, 1, 2.5),
  a: time,
  b: time,
  perWindow: fc.double({ min: 0, max: 3, noNaN: true }),
  mode: fc.constantFrom(...modes),
});

describe('the plan contains the backfill', () => {
  it('billed calls lie within the rounded range, whatever the catalog, the samples and the order', () => {
    fc.assert(
      fc.property(journey, (j) => {
        const fromMs = Math.min(j.a, j.b);
        const toMs = Math.max(j.a, j.b) + DAY_MS;
        const catalog = journeyCatalog(j.seed, j.densities, j.bursts, j.swarm);
        const adversary = { mode: j.mode };
        const windows = planWindows({ fromMs, toMs, coveredMs: [] });
        const n = Math.round(j.perWindow * windows.length);
        const { samples, largest } = sample(simulatedGateway(catalog, adversary, j.seed), windows, n, j.minMagnitude);

        const cost = earthquakeCost(
          windows.map((window) => ({
            window,
            counted: countedInWindow(window, [], 0, samples),
            bound: boundInWindow(window, samples),
            stored: false,
          })),
          ratePool(samplePieces(samples)),
          { order: DEFAULT_ORDER_FACTOR, units: DEFAULT_UNITS_FACTOR },
          probeOf(windows, j.minMagnitude, largest),
        );
        if (cost.calls === null) return;

        const model = new JourneyModel(catalog, adversary, j.seed + 1);
        // What the samples taught the workers (recordAnswerSize): the cap is at least the largest answer.
        if (largest) model.shared = { ...model.shared, capFloor: largest.size, capRegion: largest.region };
        const r = model.backfill({
          minMagnitude: j.minMagnitude,
          fromMs,
          toMs,
          refresh: false,
          killAfter: null,
          lanes: 1,
        });
        const range = rounded(cost.totalCalls);
        const why = `${samples.length} samples, kinds ${cost.kinds.join(',')}: billed ${r.calls} (${r.probes} probes), plan ${range.low}..${range.high} (expected ${range.expected})`;
        expect(r.calls, why).toBeGreaterThanOrEqual(range.low);
        expect(r.calls, why).toBeLessThanOrEqual(range.high);
      }),
      { numRuns: RUNS },
    );
  });
});
