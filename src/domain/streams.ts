/**
 * Stream identity: an operation with one set of filters (earthquakes) or one series (indicators).
 * Partitions done for one stream never count for another.
 */
import * as z from 'zod';
import {
  circleSchema,
  indicatorSeriesSchema,
  magnitudeSchema,
  type EarthquakeFilters,
  type IndicatorSeries,
} from './filters.js';
import type { Operation } from './spec.js';

/** The stored `ingest_streams.params` of an earthquake stream (snake case: SQL and BI read it). */
export const earthquakeStreamParamsSchema = z.strictObject({
  min_magnitude: magnitudeSchema.nullable(),
  circle: circleSchema.nullable(),
});
export type EarthquakeStreamParams = z.infer<typeof earthquakeStreamParamsSchema>;
export const indicatorStreamParamsSchema = indicatorSeriesSchema;

export interface StreamIdentity {
  streamKey: string;
  operation: Operation;
  params: EarthquakeStreamParams | IndicatorSeries;
}

export function filtersOfParams(p: EarthquakeStreamParams): EarthquakeFilters {
  return { minMagnitude: p.min_magnitude, circle: p.circle };
}

/** Stable text for a number, so `2.5` and `2.50` name the same stream. */
function num(n: number): string {
  return String(Number(n));
}

export function earthquakeStream(f: EarthquakeFilters): StreamIdentity {
  const parts = ['earthquake'];
  parts.push(f.minMagnitude === null ? 'all' : `m${num(f.minMagnitude)}`);
  if (f.circle) parts.push(`c${num(f.circle.latitude)},${num(f.circle.longitude)},${num(f.circle.radiusKm)}`);
  return {
    streamKey: parts.join(':'),
    operation: 'earthquake',
    params: { min_magnitude: f.minMagnitude, circle: f.circle },
  };
}

export function indicatorStream(s: IndicatorSeries): StreamIdentity {
  return {
    streamKey: `indicator:${s.indicator}:${s.country}`,
    operation: 'indicator',
    params: { indicator: s.indicator, country: s.country },
  };
}

/** The operation a stream key belongs to (keys start with it, see above). */
export function operationOfStreamKey(streamKey: string): Operation | null {
  const head = streamKey.split(':')[0];
  return head === 'earthquake' || head === 'indicator' ? head : null;
}
