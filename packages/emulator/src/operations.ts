import {
  earthquakeRequestSchema,
  indicatorRequestSchema,
  type EarthquakeEvent,
  type EarthquakeResult,
  type IndicatorResult,
} from './spec.js';
import { answerLimit, matchWindow, reportedTime, type AnswerBehaviour } from './behaviour.js';
import { materialize, tileEventId, type CatalogIndex, type EventRef } from './catalog-index.js';
import type { IndicatorStore } from './indicator-store.js';
import type { Rng } from './rng.js';
import { keepOrderOf, selectByOrder, type KeepOrder, type SelectionAccessors } from './selection.js';
import { validate } from './validation.js';
import { LIMITS, type Operation } from './spec.js';

export const USGS_SOURCE = {
  name: 'U.S. Geological Survey, Earthquake Hazards Program',
  license: 'Public domain',
  url: 'https://earthquake.usgs.gov/earthquakes/feed/',
} as const;

export interface OperationContext {
  now: () => Date;
  catalog: CatalogIndex;
  indicators: IndicatorStore;
  behaviour: AnswerBehaviour;
  /** Draws a 'random' keep-order's subset. */
  orderRng: Rng;
  /** Draws each 'mixed' call's keep-order; its own stream, so subset draws never shift it. */
  mixedRng: Rng;
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
      /** The keep-order an earthquake answer used; null for indicator answers. */
      order: KeepOrder | null;
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
  const b = ctx.behaviour;
  // The index is read once: a live change swaps in a new one, never edits this one, so the whole
  // answer comes from one catalog.
  const matched = ctx.catalog.matchRefs({
    ...matchWindow(Date.parse(req.start_time), Date.parse(req.end_time), b),
    minMagnitude: req.min_magnitude,
    minMagnitudeExclusive: b.minMagnitudeBoundary === 'exclusive',
    circle,
  });
  const order = keepOrderOf(b.order, b.mixedRandomRatio, ctx.mixedRng);
  const limit = answerLimit(req.max_results ?? LIMITS.defaultMaxResults, b);
  const selected = selectByOrder(matched, limit, order, ctx.orderRng, REF_ACCESSORS);
  const items = selected.items.map((ref) => reported(ref, b));
  return {
    kind: 'succeeded',
    operation: 'earthquake',
    result: { events: items.length === 0 && ctx.emptyAs === 'null' ? null : items, source: { ...USGS_SOURCE } },
    units: items.length,
    matched: matched.length,
    truncated: selected.truncated,
    order,
  };
}

/** 'id' orders rank by the id the answer reports, so a tiled copy ranks as `<id>~t<k>`. */
const REF_ACCESSORS: SelectionAccessors<EventRef> = {
  idOf: (r) => tileEventId(r.event.id, r.tile),
  magnitudeOf: (r) => r.event.magnitude,
  depthOf: (r) => r.event.depth_km,
};

function reported(ref: EventRef, b: AnswerBehaviour): EarthquakeEvent {
  const event = materialize(ref);
  return b.timePrecision === 'ms' ? event : { ...event, time: reportedTime(ref.timeMs, b.timePrecision) };
}

function executeIndicator(body: unknown, ctx: OperationContext): Execution {
  const v = validate(indicatorRequestSchema(ctx.now), body);
  if (!v.ok) return { kind: 'parameter_error', message: v.message };
  const found = ctx.indicators.lookup(v.value, ctx.now().getUTCFullYear());
  if (!found.ok) return { kind: 'parameter_error', message: `${found.field}: ${found.reason}` };
  const values = found.result.values ?? [];
  // A point is one (year, value) item, null values included: the answer holds every requested
  // year, as the live World Bank API does, and the client stores every one of them.
  return {
    kind: 'succeeded',
    operation: 'indicator',
    result: { ...found.result, values: values.length === 0 && ctx.emptyAs === 'null' ? null : values },
    units: values.length,
    matched: values.length,
    truncated: false,
    order: null,
  };
}
