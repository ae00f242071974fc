import type { EarthquakeEvent } from './spec.js';
import { LIMITS } from './spec.js';
import { randomInt, type Rng } from './rng.js';

/**
 * The events a live catalog adds and the revisions it makes, drawn from a seeded stream. Real USGS
 * revisions re-read magnitudes, re-word places and move origin times by a few seconds; these do
 * the same and stay within spec 2.3 (magnitude -1..10) and the brief's ±5 s.
 */

/** Both ends inclusive, epoch milliseconds. */
export interface WindowMs {
  fromMs: number;
  toMs: number;
}

export const MAX_TIME_SHIFT_MS = 5000;
export const LIVE_PLACE_ANCHOR = 'synthetic live-catalog site';

const DIRECTIONS = [
  'N',
  'NNE',
  'NE',
  'ENE',
  'E',
  'ESE',
  'SE',
  'SSE',
  'S',
  'SSW',
  'SW',
  'WSW',
  'W',
  'WNW',
  'NW',
  'NNW',
] as const;

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));
const sign = (rng: Rng): number => (rng() < 0.5 ? -1 : 1);

export function liveEventId(n: number): string {
  return `live-${n}`;
}

/** `<km> km <dir> of <anchor>`, the USGS wording for places near a named one. */
function placeNear(anchor: string, rng: Rng): string {
  return `${1 + randomInt(rng, 150)} km ${DIRECTIONS[randomInt(rng, DIRECTIONS.length)]} of ${anchor}`;
}

/** Keeps the named place ("... of Ridgecrest, CA") and redraws distance and direction. */
function revisedPlace(place: string | null, rng: Rng): string {
  const anchor = /\bof (.+)$/.exec(place ?? '')?.[1] ?? place ?? LIVE_PLACE_ANCHOR;
  const next = placeNear(anchor, rng);
  return next === place ? `${next} (revised)` : next;
}

/** A different magnitude within the spec's range; an event without one gets one, as USGS does. */
function revisedMagnitude(magnitude: number | null, rng: Rng): number {
  const base = magnitude ?? 1;
  const delta = sign(rng) * round(0.1 + 0.4 * rng(), 2);
  const up = clamp(round(base + delta, 2), LIMITS.minMagnitude, LIMITS.maxMagnitude);
  // At the range ends the shift may be clamped away; the other direction then changes it.
  return up !== magnitude ? up : clamp(round(base - delta, 2), LIMITS.minMagnitude, LIMITS.maxMagnitude);
}

/**
 * Same id, new magnitude and place, time moved by 1 ms to 5 s; the time stays inside `window`
 * (clamping only shortens the move, since the event was inside it), so a live window keeps its events.
 */
export function revisedEvent(e: EarthquakeEvent, rng: Rng, window: WindowMs): EarthquakeEvent {
  const t = Date.parse(e.time);
  const shifted = t + sign(rng) * (1 + randomInt(rng, MAX_TIME_SHIFT_MS));
  const time = clamp(shifted, Math.min(t, window.fromMs), Math.max(t, window.toMs));
  return {
    ...e,
    time: new Date(time).toISOString(),
    magnitude: revisedMagnitude(e.magnitude, rng),
    place: revisedPlace(e.place, rng),
  };
}

/** A new small event somewhere on the globe (uniform on the sphere) at a whole ms inside `window`. */
export function addedEvent(id: string, rng: Rng, window: WindowMs): EarthquakeEvent {
  const time = window.fromMs + randomInt(rng, window.toMs - window.fromMs + 1);
  const latitude = (Math.asin(2 * rng() - 1) * 180) / Math.PI;
  return {
    id,
    time: new Date(time).toISOString(),
    magnitude: round(5 * rng(), 2),
    magnitude_type: 'ml',
    place: placeNear(LIVE_PLACE_ANCHOR, rng),
    latitude: round(latitude, 4),
    longitude: round(360 * rng() - 180, 4),
    depth_km: round(70 * rng(), 2),
    tsunami_flag: false,
    url: null,
  };
}
