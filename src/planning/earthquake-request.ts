/**
 * The gateway requests of an earthquake read, pure: a query of a window, a deletion check and a
 * density sample all ask with the stream's filters and the largest max_results, so that an answer
 * below it proves its interval complete; a cap probe asks for an unfiltered month.
 */
import { requestMinMagnitude, type Circle, type EarthquakeFilters } from '../domain/filters.js';
import { LIMITS } from '../domain/spec.js';
import { DAY_MS, SECOND_MS, secondAfter, toRfc3339 } from '../domain/time.js';
import type { EarthquakeRequest } from '../gateway/schemas.js';
import type { Region } from './truncation/index.js';

export const MAX_RESULTS = LIMITS.maxResultsCeiling;

/** The request for one query of a window: the stream's filters, the query's region and circle. */
export function earthquakeRequest(
  filters: EarthquakeFilters,
  q: { region: Region; circle: Circle | null },
): EarthquakeRequest {
  const circle = q.circle ?? filters.circle;
  return {
    provider: 'quake-catalog',
    start_time: toRfc3339(q.region.lo),
    end_time: toRfc3339(q.region.hi),
    ...requestMinMagnitude(filters),
    ...(circle ? { latitude: circle.latitude, longitude: circle.longitude, radius_km: circle.radiusKm } : {}),
    max_results: MAX_RESULTS,
  };
}

/** An unfiltered month ending with the window: what the real catalog fills beyond any cap. */
export function probeRequest(window: { endMs: number }): EarthquakeRequest {
  const hi = secondAfter(window.endMs);
  return {
    provider: 'quake-catalog',
    start_time: toRfc3339(hi - LIMITS.maxWindowDays * DAY_MS + SECOND_MS),
    end_time: toRfc3339(hi),
    max_results: MAX_RESULTS,
  };
}
