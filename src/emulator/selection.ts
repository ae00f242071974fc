import { sampleInRandomOrder, type Rng } from './rng.js';

/**
 * Which events a capped answer holds, and their order. 'newest' is what USGS does by default; the
 * others exist so tests can check that a client never assumes the gateway's order (the spec leaves
 * it open): 'magnitude' keeps the largest, 'random' a seeded subset.
 */
export const KEEP_ORDERS = ['newest', 'oldest', 'random', 'magnitude'] as const;
export type KeepOrder = (typeof KEEP_ORDERS)[number];

/** The configurable modes: a keep-order, or 'mixed', which draws 'random' or 'newest' per call. */
export const EVENT_ORDERS = [...KEEP_ORDERS, 'mixed'] as const;
export type EventOrder = (typeof EVENT_ORDERS)[number];

export interface Selection<T> {
  items: T[];
  truncated: boolean;
}

/** The keep-order one call uses: `order` itself, or for 'mixed' 'random' with chance `randomRatio`. */
export function keepOrderOf(order: EventOrder, randomRatio: number, rng: Rng): KeepOrder {
  if (order !== 'mixed') return order;
  return rng() < randomRatio ? 'random' : 'newest';
}

/**
 * `ascending` is oldest first; at most `max` items come back, arranged as `order` says.
 * 'magnitude' ranks by `magnitudeOf` (null counts as smallest), ties newest first.
 */
export function selectByOrder<T>(
  ascending: readonly T[],
  max: number,
  order: KeepOrder,
  rng: Rng,
  magnitudeOf: (item: T) => number | null = () => null,
): Selection<T> {
  const truncated = ascending.length > max;
  if (order === 'random') return { items: sampleInRandomOrder(ascending, max, rng), truncated };
  if (order === 'oldest') return { items: ascending.slice(0, max), truncated };
  if (order === 'magnitude') return { items: largestFirst(ascending, magnitudeOf).slice(0, max), truncated };
  return { items: ascending.slice(Math.max(0, ascending.length - max)).reverse(), truncated };
}

function largestFirst<T>(ascending: readonly T[], magnitudeOf: (item: T) => number | null): T[] {
  const ranked = ascending.map((item, i) => ({ item, i, m: magnitudeOf(item) ?? Number.NEGATIVE_INFINITY }));
  // A later index is a later (or same-time, larger-id) event: ties go newest first, as 'newest' does.
  ranked.sort((a, b) => (a.m === b.m ? b.i - a.i : b.m > a.m ? 1 : -1));
  return ranked.map((r) => r.item);
}
