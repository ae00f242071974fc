import type { EarthquakeEvent } from './spec.js';
import { EARTH_RADIUS_KM } from './spec.js';
import { deriveRng, sampleInRandomOrder, type Rng } from './rng.js';

/**
 * Synthetic same-second swarms: many events inside one second, the case a client cannot split by
 * time alone (and, with whole-second times, cannot even order). 'world' spreads them over the
 * globe so that circles can separate them; 'place' packs them within 1 km of one point.
 */
export const SWARM_SPREADS = ['world', 'place'] as const;
export type SwarmSpread = (typeof SWARM_SPREADS)[number];

export interface SwarmSpec {
  /** Start of the second, a whole second. */
  at: Date;
  /** 1 to 1000: every event gets its own millisecond. */
  count: number;
  spread: SwarmSpread;
}

export const SWARM_MAX_COUNT = 1000;
/** Centre of a 'place' swarm (near the Kanto region, where real swarms are common). */
export const SWARM_PLACE = { latitude: 35, longitude: 139 } as const;
const PLACE_RADIUS_KM = 0.9;
const GOLDEN_ANGLE_DEG = 180 * (3 - Math.sqrt(5));

/** `2025-08-20T12:00:00Z`: the second, without the always-zero milliseconds. */
export function swarmSecond(at: Date): string {
  return at.toISOString().replace(/\.000Z$/, 'Z');
}

export function swarmEventId(at: Date, k: number): string {
  return `swarm-${swarmSecond(at)}-${k}`;
}

export function validateSwarms(swarms: readonly SwarmSpec[]): SwarmSpec[] {
  const seconds = new Set<number>();
  return swarms.map((s) => {
    const atMs = s.at instanceof Date ? s.at.getTime() : Number.NaN;
    if (!(Number.isFinite(atMs) && atMs % 1000 === 0))
      throw new RangeError(`swarm at must be a whole-second Date, got ${String(s.at)}`);
    if (!(Number.isInteger(s.count) && s.count >= 1 && s.count <= SWARM_MAX_COUNT)) {
      throw new RangeError(`swarm count must be a whole number from 1 to ${SWARM_MAX_COUNT}, got ${s.count}`);
    }
    if (!SWARM_SPREADS.includes(s.spread))
      throw new RangeError(`swarm spread must be world or place, got ${String(s.spread)}`);
    if (seconds.has(atMs)) throw new RangeError(`two swarms at ${swarmSecond(s.at)}: their ids would collide`);
    seconds.add(atMs);
    return { at: new Date(atMs), count: s.count, spread: s.spread };
  });
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Fibonacci lattice: point i of n, roughly uniform on the sphere, turned by `turnDeg` in longitude. */
function latticePoint(i: number, n: number, turnDeg: number): { latitude: number; longitude: number } {
  const latitude = (Math.asin(1 - (2 * (i + 0.5)) / n) * 180) / Math.PI;
  const longitude = ((((i * GOLDEN_ANGLE_DEG + turnDeg) % 360) + 360) % 360) - 180;
  return { latitude, longitude };
}

const KM_PER_DEGREE = (EARTH_RADIUS_KM * Math.PI) / 180;

/** A seeded point of the disc around SWARM_PLACE; within a kilometre the earth is flat enough. */
function placePoint(rng: Rng): { latitude: number; longitude: number } {
  const bearing = rng() * 2 * Math.PI;
  // sqrt makes the points uniform over the disc rather than crowded at its centre.
  const km = PLACE_RADIUS_KM * Math.sqrt(rng());
  const cosLat = Math.cos((SWARM_PLACE.latitude * Math.PI) / 180);
  return {
    latitude: SWARM_PLACE.latitude + (km * Math.cos(bearing)) / KM_PER_DEGREE,
    longitude: SWARM_PLACE.longitude + (km * Math.sin(bearing)) / (KM_PER_DEGREE * cosLat),
  };
}

/** The swarm's events, oldest first; everything drawn from `seed` and the swarm's second. */
export function swarmEvents(swarm: SwarmSpec, seed: number): EarthquakeEvent[] {
  const rng = deriveRng(seed, `swarm ${swarm.at.getTime()}`);
  const n = swarm.count;
  const offsets = sampleInRandomOrder(
    Array.from({ length: 1000 }, (_, ms) => ms),
    n,
    rng,
  ).sort((a, b) => a - b);
  // Lattice points in a seeded order, so that neighbours in time are not neighbours on the globe.
  const slots = sampleInRandomOrder(
    Array.from({ length: n }, (_, i) => i),
    n,
    rng,
  );
  const turn = rng() * 360;
  return offsets.map((offset, k) => {
    const world = swarm.spread === 'world';
    const p = world ? latticePoint(slots[k] as number, n, turn) : placePoint(rng);
    return {
      id: swarmEventId(swarm.at, k),
      time: new Date(swarm.at.getTime() + offset).toISOString(),
      magnitude: round(1 + 2 * rng(), 2),
      magnitude_type: 'ml',
      place: world ? 'synthetic same-second swarm' : 'synthetic same-second swarm near 35N 139E',
      latitude: round(p.latitude, 5),
      longitude: round(p.longitude, 5),
      depth_km: round(world ? 5 + 60 * rng() : 8 + 4 * rng(), 2),
      tsunami_flag: false,
      url: null,
    };
  });
}
