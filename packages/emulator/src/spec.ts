/**
 * The gateway spec (gateway-data-services.md) as this emulator reads it: paths, providers, limits,
 * the request bodies it accepts and the answer shapes it writes. Written apart from the pipeline's
 * own reading on purpose: an emulator that shared the client's schemas would share its mistakes.
 */
import { z } from 'zod';

export type Operation = 'earthquake' | 'indicator';

/** Spec parts 1.5, 1.6, 1.7 and 4. */
export const OPERATIONS = {
  earthquake: {
    tier: 'earthquake-standard',
    path: '/v1/gateway/earthquake-standard/v1/earthquake-queries',
    provider: 'quake-catalog',
    unit: 'events',
  },
  indicator: {
    tier: 'economic-indicator-standard',
    path: '/v1/gateway/economic-indicator-standard/v1/economic-indicator-queries',
    provider: 'development-indicators',
    unit: 'points',
  },
} as const satisfies Record<Operation, { tier: string; path: string; provider: string; unit: string }>;

/** Spec part 8. */
export const LIMITS = {
  maxWindowDays: 31,
  maxResultsCeiling: 200,
  defaultMaxResults: 50,
  minMagnitude: -1,
  maxMagnitude: 10,
  maxRadiusKm: 20001.6,
  firstYear: 1960,
  maxYearSpan: 70,
} as const;

const DAY_MS = 86_400_000;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/** RFC 3339 with a `Z` or numeric offset, checked field by field (Date.parse rolls 02-31 over). */
export function isRfc3339(value: string): boolean {
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() + (month === 2 && !leap(year) ? -1 : 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  return m[7] === undefined || (Number(m[7]) <= 23 && Number(m[8]) <= 59);
}

function leap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const rfc3339 = z.string().refine(isRfc3339, 'must be an RFC 3339 timestamp');
const magnitude = z.number().min(LIMITS.minMagnitude).max(LIMITS.maxMagnitude);

/** Spec 4.1 + 8. `now` is a parameter because "not in the future" depends on it. */
export function earthquakeRequestSchema(now: () => Date = () => new Date()) {
  return z
    .strictObject({
      provider: z.literal(OPERATIONS.earthquake.provider),
      start_time: rfc3339,
      end_time: rfc3339,
      min_magnitude: magnitude.optional(),
      latitude: z.number().min(-90).max(90).optional(),
      longitude: z.number().min(-180).max(180).optional(),
      radius_km: z.number().gt(0).max(LIMITS.maxRadiusKm).optional(),
      max_results: z.number().int().min(1).max(LIMITS.maxResultsCeiling).optional(),
    })
    .superRefine((req, ctx) => {
      // A malformed timestamp already has its own issue; comparing NaN would only add noise.
      if (!isRfc3339(req.start_time) || !isRfc3339(req.end_time)) return;
      const start = Date.parse(req.start_time);
      const end = Date.parse(req.end_time);
      if (start > now().getTime())
        ctx.addIssue({ code: 'custom', path: ['start_time'], message: 'must not be in the future' });
      if (!(end > start)) {
        ctx.addIssue({ code: 'custom', path: ['end_time'], message: 'must be after start_time' });
      } else if (end - start > LIMITS.maxWindowDays * DAY_MS) {
        const message = `must be at most ${LIMITS.maxWindowDays} days after start_time`;
        ctx.addIssue({ code: 'custom', path: ['end_time'], message });
      }
      const set = [req.latitude, req.longitude, req.radius_km].filter((v) => v !== undefined).length;
      if (set !== 0 && set !== 3) {
        const message = 'latitude, longitude and radius_km must be set together or all be absent';
        ctx.addIssue({ code: 'custom', path: ['radius_km'], message });
      }
    });
}
export type EarthquakeRequest = z.infer<ReturnType<typeof earthquakeRequestSchema>>;

export function indicatorRequestSchema(now: () => Date = () => new Date()) {
  return z
    .strictObject({
      provider: z.literal(OPERATIONS.indicator.provider),
      country: z
        .string()
        .regex(/^(?=.*[A-Z])[A-Z0-9]{2,3}$/, 'must be a 2 or 3 character country or aggregate code (A-Z, 0-9)'),
      indicator: z.string().regex(/^[A-Za-z0-9._]{3,64}$/, 'must be 3 to 64 letters, digits, dots or underscores'),
      start_year: z.number().int().min(LIMITS.firstYear).optional(),
      end_year: z.number().int().optional(),
    })
    .superRefine((req, ctx) => {
      const currentYear = now().getUTCFullYear();
      const endYear = req.end_year ?? currentYear;
      const startYear = req.start_year ?? endYear - 9;
      const issue = (message: string): void => void ctx.addIssue({ code: 'custom', path: ['end_year'], message });
      if (endYear < LIMITS.firstYear) issue(`must be ${LIMITS.firstYear} or later`);
      if (endYear > currentYear) issue(`must not be after ${currentYear}`);
      if (endYear < startYear) issue('must not be before start_year');
      else if (endYear - startYear + 1 > LIMITS.maxYearSpan) {
        issue(`span from start_year to end_year must be at most ${LIMITS.maxYearSpan} years`);
      }
    });
}
export type IndicatorRequest = z.infer<ReturnType<typeof indicatorRequestSchema>>;

/** One event of an earthquake answer (spec 4.2). */
export interface EarthquakeEvent {
  id: string;
  time: string;
  magnitude: number | null;
  magnitude_type: string | null;
  place: string | null;
  latitude: number;
  longitude: number;
  depth_km: number | null;
  tsunami_flag: boolean;
  url: string | null;
}

interface Source {
  name: string;
  license: string;
  url: string;
}

export interface EarthquakeResult {
  events: EarthquakeEvent[] | null;
  source: Source;
}

export interface IndicatorResult {
  indicator: { id: string; name: string };
  country: { id: string; name: string };
  values: { year: number; value: number | null }[] | null;
  last_updated: string | null;
  source: Source;
}

/** A bundled or given data file does not parse. */
export class EmulatorDataError extends Error {
  override readonly name = 'EmulatorDataError';
}

/** A flag's value is wrong; the message names the flag. */
export class EmulatorUsageError extends Error {
  override readonly name = 'EmulatorUsageError';
}

/** IUGG mean earth radius R1, as the pipeline uses, so tests compute the same distances. */
export const EARTH_RADIUS_KM = 6371.0088;
const RAD = Math.PI / 180;

export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

export interface Circle {
  latitude: number;
  longitude: number;
  radiusKm: number;
}
