/**
 * What the gateway spec (gateway-data-services.md) fixes for both operations: their paths,
 * providers, units and limits. Everything else (schemas, planners, emulator) reads it from here.
 */

export type Operation = 'earthquake' | 'indicator';
export const OPERATION_NAMES = ['earthquake', 'indicator'] as const satisfies readonly Operation[];

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

export const EARTHQUAKE_PROVIDER = OPERATIONS.earthquake.provider;
export const INDICATOR_PROVIDER = OPERATIONS.indicator.provider;

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
  indicatorCodeMin: 3,
  indicatorCodeMax: 64,
} as const;

/** Spec 1.7 and 2.2: the only outcome that is billed; other outcome values are not shown. */
export const SUCCEEDED = 'succeeded';

export function isBilled(outcome: string | null): boolean {
  return outcome === SUCCEEDED;
}

/** Span counted inclusively (1960-2029 is 70 years), valid under either reading of the spec. */
export function yearSpan(startYear: number, endYear: number): number {
  return endYear - startYear + 1;
}
