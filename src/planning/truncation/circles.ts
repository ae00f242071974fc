/**
 * More events in one or two seconds than an answer may hold cannot be separated by time. When
 * they happened in different places, circles that together cover the sphere (or a circle that
 * was still too crowded) separate them. Generous radii: a gateway may measure distance on a
 * slightly different earth, and every point must sit well inside some circle.
 */
import { EARTH_RADIUS_KM, destination } from '../../domain/geo.js';
import { LIMITS } from '../../domain/spec.js';
import type { CircleCut } from './frontier.js';

/** The sphere in 6 circles, and a still crowded one in 7 smaller ones: 48 circles at most per region. */
const MAX_DEPTH = 2;
/** 54.74 degrees (vertex of an octahedron to the centre of a face) and then some. */
const OCTAHEDRON_RADIUS_KM = EARTH_RADIUS_KM * 0.9553 * 1.06;
/** Seven circles of 0.55 r (one central, six at 0.866 r) cover a circle of radius r with margin. */
const CHILD_SHARE = 0.55;
const RING_SHARE = 0.866;

/** Six circles around the octahedron's vertices: every point of the sphere is inside one. */
export function sphereCover(): CircleCut[] {
  const vertices = [
    [90, 0],
    [-90, 0],
    [0, 0],
    [0, 90],
    [0, 180],
    [0, -90],
  ] as const;
  return vertices.map(([latitude, longitude]) => ({
    latitude,
    longitude,
    radiusKm: Math.min(LIMITS.maxRadiusKm, OCTAHEDRON_RADIUS_KM),
    depth: 1,
  }));
}

/** Seven smaller circles covering `c`, or none when it has been cut as often as allowed. */
export function circleCuts(c: CircleCut): CircleCut[] {
  if (c.depth >= MAX_DEPTH) return [];
  const radiusKm = c.radiusKm * CHILD_SHARE;
  const depth = c.depth + 1;
  const ring = [0, 60, 120, 180, 240, 300].map((bearing) => ({
    ...destination(c.latitude, c.longitude, bearing, c.radiusKm * RING_SHARE),
    radiusKm,
    depth,
  }));
  return [{ latitude: c.latitude, longitude: c.longitude, radiusKm, depth }, ...ring];
}
