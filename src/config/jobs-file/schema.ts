/**
 * The whole-document schema: field-by-field rules only. Rules that tie several fields together
 * (schedule xor every, the circle, to_year >= from_year, unique names) are checked on the raw
 * document by `crossFieldProblems`, so that one bad field never hides another problem of the same stream.
 */
import { z } from 'zod';
import { earthquakeSchema } from './earthquake-stream.js';
import { indicatorSchema } from './indicator-stream.js';
import type { Segment } from './problem-path.js';

export function jobsFileSchema(now: Date) {
  return z.strictObject({
    earthquakes: z.array(earthquakeSchema(now)).nullable().optional(),
    indicators: z.array(indicatorSchema(now)).nullable().optional(),
  });
}

export type Parsed = z.output<ReturnType<typeof jobsFileSchema>>;

/** The keys each mapping accepts, for "unknown key" messages (read from the schema itself). */
const ALLOWED_KEYS = (() => {
  const root = jobsFileSchema(new Date(0));
  const earthquake = root.shape.earthquakes.unwrap().unwrap().element;
  const indicator = root.shape.indicators.unwrap().unwrap().element;
  return {
    root: Object.keys(root.shape),
    earthquake: Object.keys(earthquake.shape),
    circle: Object.keys(earthquake.shape.circle.unwrap().shape),
    indicator: Object.keys(indicator.shape),
  };
})();

export function allowedKeysAt(path: readonly Segment[]): readonly string[] {
  if (path.length === 0) return ALLOWED_KEYS.root;
  if (path.length === 2) return path[0] === 'earthquakes' ? ALLOWED_KEYS.earthquake : ALLOWED_KEYS.indicator;
  if (path.length === 3 && path[0] === 'earthquakes' && path[2] === 'circle') return ALLOWED_KEYS.circle;
  return [];
}
