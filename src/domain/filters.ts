/**
 * What a stream asks the gateway for, with the spec's rules (parts 4 and 8) written once. CLI flags,
 * jobs.yaml, job payloads and gateway requests all validate through these schemas; each caller
 * words its own messages so that they name the flag, file line or field the value came from.
 */
import * as z from 'zod';
import { LIMITS } from './spec.js';

export const magnitudeSchema = z.number().min(LIMITS.minMagnitude).max(LIMITS.maxMagnitude);
export const latitudeSchema = z.number().min(-90).max(90);
export const longitudeSchema = z.number().min(-180).max(180);
export const radiusKmSchema = z.number().gt(0).max(LIMITS.maxRadiusKm);

export const circleSchema = z.strictObject({
  latitude: latitudeSchema,
  longitude: longitudeSchema,
  radiusKm: radiusKmSchema,
});
export type Circle = z.infer<typeof circleSchema>;

export const earthquakeFiltersSchema = z.strictObject({
  minMagnitude: magnitudeSchema.nullable(),
  circle: circleSchema.nullable(),
});
export type EarthquakeFilters = z.infer<typeof earthquakeFiltersSchema>;

export const NO_FILTERS: EarthquakeFilters = { minMagnitude: null, circle: null };

/**
 * Spec 4.1 says neither whether `min_magnitude` is inclusive nor how precisely the gateway holds
 * magnitudes, so the stream's minimum is asked a millionth lower: a gateway comparing with `>`, or
 * holding 2.3 as the float32 2.2999999523, still returns the events at the minimum. Catalogs give
 * magnitudes to two or three decimals, so the slack admits no event below it. Stored events are
 * judged with the same slack (see `magnitudeFloor`).
 */
export const MAGNITUDE_SLACK = 1e-6;

/** The lowest magnitude a stream with minimum `minMagnitude` keeps; the spec's range floors it. */
export function magnitudeFloor(minMagnitude: number): number {
  return Math.max(LIMITS.minMagnitude, Number((minMagnitude - MAGNITUDE_SLACK).toFixed(7)));
}

/** The `min_magnitude` a request for these filters sends (absent without a minimum). */
export function requestMinMagnitude(f: EarthquakeFilters): { min_magnitude?: number } {
  return f.minMagnitude === null ? {} : { min_magnitude: magnitudeFloor(f.minMagnitude) };
}

/**
 * Spec 4.1 rule 1: latitude, longitude and radius_km are set together or all absent. Returns the
 * circle, `null` when none is set, or `'partial'` when only some are.
 */
export function circleFromParts(parts: {
  latitude?: number | null | undefined;
  longitude?: number | null | undefined;
  radiusKm?: number | null | undefined;
}): Circle | null | 'partial' {
  const { latitude, longitude, radiusKm } = parts;
  const set = [latitude, longitude, radiusKm].filter((v) => v !== undefined && v !== null).length;
  if (set === 0) return null;
  if (set !== 3) return 'partial';
  return { latitude: latitude!, longitude: longitude!, radiusKm: radiusKm! };
}

/** ISO 3166-1 alpha-2/alpha-3 or a World Bank aggregate code (`WLD`, `EUU`, `1W`). */
export const countryCodeSchema = z
  .string()
  .regex(/^(?=.*[A-Z])[A-Z0-9]{2,3}$/, 'must be a 2 or 3 character country or aggregate code (A-Z, 0-9)');

export const indicatorCodeSchema = z
  .string()
  .regex(
    new RegExp(`^[A-Za-z0-9._]{${LIMITS.indicatorCodeMin},${LIMITS.indicatorCodeMax}}$`),
    `must be ${LIMITS.indicatorCodeMin} to ${LIMITS.indicatorCodeMax} characters of letters, digits, dot or underscore`,
  );

/** One (indicator, country) pair; the country as the user asked for it (the gateway may answer another id). */
export const indicatorSeriesSchema = z.strictObject({
  indicator: indicatorCodeSchema,
  country: countryCodeSchema,
});
export type IndicatorSeries = z.infer<typeof indicatorSeriesSchema>;

/** A year the indicator query accepts: 1960 or later and not after `currentYear` (domain/time.ts `currentYearEverywhere`). */
export function yearSchema(currentYear: number) {
  return z
    .number()
    .int()
    .min(LIMITS.firstYear)
    .max(currentYear, {
      error: (iss) => `must not be after the current year (${currentYear}), got ${String(iss.input)}`,
    });
}
