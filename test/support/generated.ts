/**
 * Generated windows and gateways for property tests of the truncation planner (and the bench that
 * counts how often they fail): catalogs of 0 to 1,500 events over an hour to a month, half of them in
 * one to three clusters of five seconds or an hour, some at the window's ends and whole seconds; and
 * gateways in every keep-order the spec allows, either end exclusive, fractions ignored, capped.
 */
import fc from 'fast-check';
import { createRng } from '@gateway-ingest/emulator';
import type { CatalogEvent, Mode } from './adversary.js';

const DAY = 86_400_000;
/** The generated windows start here, give or take a quarter of an hour. */
export const START = Date.UTC(2025, 4, 6, 9, 24, 12, 345);

export const catalogs = fc
  .record({
    n: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 1, max: 9 }),
      fc.integer({ min: 150, max: 250 }),
      fc.integer({ min: 300, max: 1500 }),
    ),
    lengthMs: fc.constantFrom(3_600_000, DAY, 7 * DAY, 31 * DAY - 2000),
    offsetMs: fc.integer({ min: 0, max: 999_999 }),
    seed: fc.integer({ min: 1, max: 1_000_000 }),
  })
  .map(({ n, lengthMs, offsetMs, seed }) => {
    const rng = createRng(seed);
    const ws = START + offsetMs;
    const we = ws + lengthMs;
    const clusters = Array.from({ length: 1 + Math.floor(rng() * 3) }, () => ({
      at: ws + rng() * lengthMs,
      width: rng() < 0.5 ? 5_000 : 3_600_000,
    }));
    const ends = [ws, we, ws - 1000, we + 1000, ws + 1000, we - 1000];
    const events: CatalogEvent[] = Array.from({ length: n }, (_, i) => {
      const r = rng();
      const c = clusters[Math.floor(rng() * clusters.length)]!;
      let t =
        r < 0.45
          ? ws + rng() * lengthMs
          : r < 0.85
            ? c.at + (rng() - 0.5) * c.width
            : ends[Math.floor(rng() * ends.length)]!;
      if (rng() < 0.3) t = Math.floor(t / 1000) * 1000;
      return {
        id: `g${seed}-${i}`,
        timeMs: Math.round(t),
        magnitude: Math.round(rng() * 70 - 10) / 10,
        depthKm: rng() * 700,
        latitude: Math.asin(2 * rng() - 1) * (180 / Math.PI),
        longitude: rng() * 360 - 180,
      };
    });
    return { window: { startMs: ws, endMs: we }, events };
  });

export const adversaries = fc.record({
  mode: fc.oneof(
    fc.constantFrom<Mode>(
      'newest',
      'oldest',
      'magnitude',
      'random',
      'id',
      'id-desc',
      'newest-swap',
      'depth',
      'permutation',
    ),
    fc.constant({
      mixed: [
        ['newest', 0.25],
        ['oldest', 0.25],
        ['magnitude', 0.25],
        ['random', 0.25],
      ] as Array<[Mode, number]>,
    }),
    fc.constant({
      mixed: [
        ['newest-swap', 0.4],
        ['id', 0.3],
        ['permutation', 0.3],
      ] as Array<[Mode, number]>,
    }),
  ),
  startExclusive: fc.constantFrom<boolean | 'sometimes'>(false, true, 'sometimes'),
  endExclusive: fc.constantFrom<boolean | 'sometimes'>(false, true, 'sometimes'),
  ignoreFraction: fc.boolean(),
  reportedUnitMs: fc.constantFrom(1, 1000),
  cap: fc.constantFrom(200, 200, 100, 37),
});
