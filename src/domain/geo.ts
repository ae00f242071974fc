/** Circles on the earth, as the spec's latitude, longitude and radius_km describe them. */

/** IUGG mean earth radius R1; fixed here so tests can compute the same distances. */
export const EARTH_RADIUS_KM = 6371.0088;

const RAD = Math.PI / 180;

/** Haversine great-circle distance; numerically stable for the short distances most circles use. */
export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

type Vec = [number, number, number];
const toVec = (lat: number, lon: number): Vec => [
  Math.cos(lat * RAD) * Math.cos(lon * RAD),
  Math.cos(lat * RAD) * Math.sin(lon * RAD),
  Math.sin(lat * RAD),
];
const cross = (a: Vec, b: Vec): Vec => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const norm = (a: Vec): Vec => {
  const l = Math.hypot(...a);
  return [a[0] / l, a[1] / l, a[2] / l];
};

/**
 * The point `distanceKm` away from (lat, lon) along the initial `bearingDeg` (great circle, 0 =
 * north). Vector form, so that it holds at the poles too, where every direction is south (there
 * the bearing is measured from the meridian 0).
 */
export function destination(
  lat: number,
  lon: number,
  bearingDeg: number,
  distanceKm: number,
): { latitude: number; longitude: number } {
  const c = toVec(lat, lon);
  const polar = Math.abs(lat) > 89.999;
  const east = polar ? ([0, 1, 0] as Vec) : norm(cross([0, 0, 1], c));
  const north = cross(c, east);
  const d = distanceKm / EARTH_RADIUS_KM;
  const t = bearingDeg * RAD;
  const p = c.map(
    (ci, i) => Math.cos(d) * ci + Math.sin(d) * (Math.cos(t) * north[i]! + Math.sin(t) * east[i]!),
  ) as Vec;
  return { latitude: Math.asin(Math.max(-1, Math.min(1, p[2]))) / RAD, longitude: Math.atan2(p[1], p[0]) / RAD };
}
