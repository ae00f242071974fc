/** An earthquake stream: its keys, the rules tying them together, and its resolved form. */
import { z } from 'zod';
import { latitudeSchema, longitudeSchema, magnitudeSchema, radiusKmSchema } from '../../gateway/schemas.js';
import { DEFAULT_LOOKBACK_MS } from './constants.js';
import { durationSchema, instantSchema, streamNameSchema } from './fields.js';
import type { Report, Segment } from './problem-path.js';
import { has, isRecord } from './raw-document.js';
import { scheduleOf, scheduleShape } from './schedule.js';
import type { EarthquakeStreamConfig } from './types.js';

const CIRCLE_KEYS = ['latitude', 'longitude', 'radius_km'] as const;

/** Every circle key is optional here: "set together" is a cross-field rule, see `earthquakeRules`. */
export function earthquakeSchema(now: Date) {
  return z.strictObject({
    name: streamNameSchema,
    enabled: z.boolean().optional(),
    min_magnitude: magnitudeSchema.optional(),
    circle: z
      .strictObject({
        latitude: latitudeSchema.optional(),
        longitude: longitudeSchema.optional(),
        radius_km: radiusKmSchema.optional(),
      })
      .optional(),
    ...scheduleShape(),
    lookback: durationSchema.optional(),
    backfill_from: instantSchema(now).optional(),
  });
}

export function earthquakeRules(item: Record<string, unknown>, base: readonly Segment[], report: Report): void {
  if (isRecord(item.circle)) {
    const circle = item.circle;
    const set = CIRCLE_KEYS.filter((k) => has(circle, k));
    if (set.length !== CIRCLE_KEYS.length) {
      report([...base, 'circle'], 'latitude, longitude and radius_km must be set together');
    }
  }
}

export function resolveEarthquake(s: z.output<ReturnType<typeof earthquakeSchema>>): EarthquakeStreamConfig {
  const c = s.circle;
  const circle =
    c && c.latitude !== undefined && c.longitude !== undefined && c.radius_km !== undefined
      ? { latitude: c.latitude, longitude: c.longitude, radiusKm: c.radius_km }
      : null;
  return {
    name: s.name,
    minMagnitude: s.min_magnitude ?? null,
    circle,
    schedule: scheduleOf(s),
    lookbackMs: s.lookback ?? DEFAULT_LOOKBACK_MS,
    backfillFrom: s.backfill_from ?? null,
    enabled: s.enabled ?? true,
  };
}
