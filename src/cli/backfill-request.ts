/**
 * What a backfill covers, from the range flags (`backfill earthquakes|indicators`) or from a stream
 * of jobs.yaml (`backfill --stream NAME`). `plan` takes the same flags and names the same streams, so
 * both commands read their request here.
 */
import { loadJobsFile } from '../config/jobs-file.js';
import {
  circleFromParts,
  countryCodeSchema,
  indicatorCodeSchema,
  latitudeSchema,
  longitudeSchema,
  magnitudeSchema,
  radiusKmSchema,
  type EarthquakeFilters,
} from '../domain/filters.js';
import { UsageError } from '../errors.js';
import type { BackfillRequest } from '../ingest/plan.js';
import { resolveYearRange } from '../planning/chunks.js';
import { parseCodeFlag, parseInstantFlag, parseNumberFlag, parseYearFlag } from './flags.js';
import { currentYearEverywhere } from '../domain/time.js';

/** The flags of `earthquakeRangeOptions`, as commander hands them over. */
export interface EarthquakeRangeFlags {
  from: string;
  to?: string;
  minMagnitude?: string;
  latitude?: string;
  longitude?: string;
  radiusKm?: string;
}

/** Pure flag validation: every problem names the flag and the value. */
export function parseEarthquakeFlags(
  f: EarthquakeRangeFlags,
  nowMs: number,
): { filters: EarthquakeFilters; fromMs: number; toMs: number } {
  const fromMs = parseInstantFlag('--from', f.from);
  const toMs = f.to === undefined ? nowMs : parseInstantFlag('--to', f.to);
  if (fromMs > nowMs) throw new UsageError(`--from: "${f.from}" is in the future`);
  if (toMs <= fromMs) throw new UsageError(`--to: "${f.to}" must be after --from "${f.from}"`);
  const minMagnitude = parseNumberFlag('--min-magnitude', f.minMagnitude, magnitudeSchema);
  const circle = circleFromParts({
    latitude: parseNumberFlag('--latitude', f.latitude, latitudeSchema),
    longitude: parseNumberFlag('--longitude', f.longitude, longitudeSchema),
    radiusKm: parseNumberFlag('--radius-km', f.radiusKm, radiusKmSchema),
  });
  if (circle === 'partial')
    throw new UsageError('--latitude, --longitude and --radius-km must be given together or not at all');
  // Windows starting after now would be refused by the gateway; history ends now.
  return { filters: { minMagnitude, circle }, fromMs, toMs: Math.min(toMs, nowMs) };
}

/** The flags of `indicatorRangeOptions`, as commander hands them over. */
export interface IndicatorRangeFlags {
  indicator: string[];
  country: string[];
  fromYear?: string;
  toYear?: string;
}

export function parseIndicatorFlags(f: IndicatorRangeFlags, currentYear: number) {
  const indicators = [...new Set(f.indicator)].map((i) => parseCodeFlag('--indicator', i, indicatorCodeSchema));
  const countries = [...new Set(f.country.map((c) => c.toUpperCase()))].map((c) =>
    parseCodeFlag('--country', c, countryCodeSchema),
  );
  if (indicators.length === 0) throw new UsageError('--indicator: at least one indicator code is required');
  if (countries.length === 0) throw new UsageError('--country: at least one country code is required');
  const fromYear = parseYearFlag('--from-year', f.fromYear);
  const toYear = parseYearFlag('--to-year', f.toYear);
  try {
    return { indicators, countries, ...resolveYearRange({ fromYear, toYear, currentYear }) };
  } catch (e) {
    // The flag the message is about comes first in it ("fromYear 2010 is after toYear 2000").
    const flag = (e as Error).message.startsWith('toYear') ? '--to-year' : '--from-year';
    throw new UsageError(
      `${flag}: ${(e as Error).message.replace(/fromYear/g, '--from-year').replace(/toYear/g, '--to-year')}`,
    );
  }
}

/** A jobs.yaml stream as `backfill --stream NAME` enqueues it: from its backfill_from or from_year, up to now. */
export async function streamRequest(
  configPath: string,
  name: string,
  refresh: boolean,
  nowMs: number,
): Promise<BackfillRequest> {
  const file = await loadJobsFile(configPath);
  const quake = file.earthquakes.find((s) => s.name === name);
  const indicator = file.indicators.find((s) => s.name === name);
  if (quake) {
    if (!quake.backfillFrom) throw new UsageError(`--stream: "${name}" has no backfill_from in ${configPath}`);
    return {
      operation: 'earthquake',
      filters: { minMagnitude: quake.minMagnitude, circle: quake.circle },
      fromMs: quake.backfillFrom.getTime(),
      toMs: nowMs,
      refresh,
      streamName: quake.name,
    };
  }
  if (!indicator) throw new UsageError(`--stream: "${name}" is not declared in ${configPath}`);
  const years = resolveYearRange({
    fromYear: indicator.fromYear ?? undefined,
    toYear: indicator.toYear ?? undefined,
    currentYear: currentYearEverywhere(nowMs),
  });
  return {
    operation: 'indicator',
    indicators: indicator.indicators,
    countries: indicator.countries,
    ...years,
    refresh,
    streamName: indicator.name,
  };
}
