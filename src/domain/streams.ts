import type { Operation } from '../gateway/schemas.js';

export interface Circle {
  latitude: number;
  longitude: number;
  radiusKm: number;
}

export interface EarthquakeFilters {
  minMagnitude: number | null;
  circle: Circle | null;
}

export interface IndicatorSeriesSpec {
  indicator: string;
  /** The code as the user asked for it; the gateway may answer with another id. */
  country: string;
}

export interface StreamIdentity {
  streamKey: string;
  operation: Operation;
  params: Record<string, unknown>;
}

/** Stable text for a number, so `2.5` and `2.50` name the same stream. */
function num(n: number): string {
  return String(Number(n));
}

/** Operation + filters; windows done for one stream never count for another. */
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

export function indicatorStream(s: IndicatorSeriesSpec): StreamIdentity {
  return {
    streamKey: `indicator:${s.indicator}:${s.country}`,
    operation: 'indicator',
    params: { indicator: s.indicator, country: s.country },
  };
}
