import {
  earthquakeRequestSchema,
  indicatorRequestSchema,
  LIMITS,
  type EarthquakeResult,
  type IndicatorResult,
  type Operation,
} from '../gateway/schemas.js';
import { materialize, type CatalogIndex } from './catalog-index.js';
import type { IndicatorStore } from './indicator-store.js';
import type { Rng } from './rng.js';
import { selectByOrder, type EventOrder } from './selection.js';
import { validate } from './validation.js';

export const USGS_SOURCE = {
  name: 'U.S. Geological Survey, Earthquake Hazards Program',
  license: 'Public domain',
  url: 'https://earthquake.usgs.gov/earthquakes/feed/',
} as const;

export interface OperationContext {
  now: () => Date;
  catalog: CatalogIndex;
  indicators: IndicatorStore;
  order: EventOrder;
  orderRng: Rng;
  emptyAs: 'array' | 'null';
}

/** What executing one (invocation_id-free) request body produced, before any fault is applied. */
export type Execution =
  | { kind: 'parameter_error'; message: string }
  | {
      kind: 'succeeded';
      operation: Operation;
      result: EarthquakeResult | IndicatorResult;
      units: number;
      matched: number;
      truncated: boolean;
    };

export function execute(operation: Operation, body: unknown, ctx: OperationContext): Execution {
  return operation === 'earthquake' ? executeEarthquake(body, ctx) : executeIndicator(body, ctx);
}

function executeEarthquake(body: unknown, ctx: OperationContext): Execution {
  const v = validate(earthquakeRequestSchema(ctx.now), body);
  if (!v.ok) return { kind: 'parameter_error', message: v.message };
  const req = v.value;
  const circle =
    req.latitude !== undefined && req.longitude !== undefined && req.radius_km !== undefined
      ? { latitude: req.latitude, longitude: req.longitude, radiusKm: req.radius_km }
      : undefined;
  const matched = ctx.catalog.matchRefs({
    startMs: Date.parse(req.start_time),
    endMs: Date.parse(req.end_time),
    minMagnitude: req.min_magnitude,
    circle,
  });
  const max = req.max_results ?? LIMITS.defaultMaxResults;
  const selected = selectByOrder(matched, max, ctx.order, ctx.orderRng);
  const items = selected.items.map(materialize);
  const { truncated } = selected;
  return {
    kind: 'succeeded',
    operation: 'earthquake',
    result: { events: items.length === 0 && ctx.emptyAs === 'null' ? null : items, source: { ...USGS_SOURCE } },
    units: items.length,
    matched: matched.length,
    truncated,
  };
}

function executeIndicator(body: unknown, ctx: OperationContext): Execution {
  const v = validate(indicatorRequestSchema(ctx.now), body);
  if (!v.ok) return { kind: 'parameter_error', message: v.message };
  const found = ctx.indicators.lookup(v.value, ctx.now().getUTCFullYear());
  if (!found.ok) return { kind: 'parameter_error', message: `${found.field}: ${found.reason}` };
  const values = found.result.values ?? [];
  return {
    kind: 'succeeded',
    operation: 'indicator',
    result: { ...found.result, values: values.length === 0 && ctx.emptyAs === 'null' ? null : values },
    units: values.length,
    matched: values.length,
    truncated: false,
  };
}
