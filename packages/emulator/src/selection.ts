import { sampleInRandomOrder, type Rng } from './rng.js';

/**
 * Which events a capped answer holds, and their order. 'newest' is what USGS does by default; the
 * others exist so tests can check that a client never assumes the gateway's order (the spec leaves
 * it open): 'magnitude' keeps the largest, 'depth' the deepest, 'random' a seeded subset, 'id' and
 * 'id-desc' what a database's `ORDER BY id LIMIT n` keeps, and 'newest-swap' is 'newest' with one
 * kept event from the middle traded for the next older one, so the kept set has a hole inside its
 * time span.
 */
export const KEEP_ORDERS = [
  'newest',
  'oldest',
  'random',
  'magnitude',
  'id',
  'id-desc',
  'newest-swap',
  'depth',
] as const;
export type KeepOrder = (typeof KEEP_ORDERS)[number];

/** The configurable modes: a keep-order, or 'mixed', which draws 'random' or 'newest' per call. */
export const EVENT_ORDERS = [...KEEP_ORDERS, 'mixed'] as const;
export type EventOrder = (typeof EVENT_ORDERS)[number];

export interface Selection<T> {
  items: T[];
  truncated: boolean;
}

/**
 * What the orders that rank by an event's fields read from an item. 'id' and 'id-desc' need
 * `idOf`; without `magnitudeOf` or `depthOf` every item ties and those orders keep the newest.
 */
export interface SelectionAccessors<T> {
  idOf?: (item: T) => string;
  magnitudeOf?: (item: T) => number | null;
  depthOf?: (item: T) => number | null;
}

/** The keep-order one call uses: `order` itself, or for 'mixed' 'random' with chance `randomRatio`. */
export function keepOrderOf(order: EventOrder, randomRatio: number, rng: Rng): KeepOrder {
  if (order !== 'mixed') return order;
  return rng() < randomRatio ? 'random' : 'newest';
}

/**
 * `ascending` is oldest first; at most `max` items come back, arranged as `order` says.
 * 'magnitude' ranks by `magnitudeOf` and 'depth' by `depthOf` (null counts as smallest or
 * shallowest), ties newest first. 'id' ranks by `idOf`, compared as plain strings (code units, no
 * locale), smallest first; 'id-desc' largest first.
 */
export function selectByOrder<T>(
  ascending: readonly T[],
  max: number,
  order: KeepOrder,
  rng: Rng,
  accessors: SelectionAccessors<T> = {},
): Selection<T> {
  const truncated = ascending.length > max;
  switch (order) {
    case 'random':
      return { items: sampleInRandomOrder(ascending, max, rng), truncated };
    case 'oldest':
      return { items: ascending.slice(0, max), truncated };
    case 'magnitude':
      return { items: largestFirst(ascending, accessors.magnitudeOf).slice(0, max), truncated };
    case 'depth':
      return { items: largestFirst(ascending, accessors.depthOf).slice(0, max), truncated };
    case 'id':
    case 'id-desc':
      return { items: byId(ascending, idAccessor(order, accessors), order === 'id-desc').slice(0, max), truncated };
    case 'newest-swap':
      return { items: newestSwapped(ascending, max), truncated };
    case 'newest':
      return { items: newestFirst(ascending, max), truncated };
  }
}

function newestFirst<T>(ascending: readonly T[], max: number): T[] {
  return ascending.slice(Math.max(0, ascending.length - max)).reverse();
}

/**
 * The newest `max`, newest first; when truncated, the one at index floor(max/2) gives way to the
 * (max+1)-th newest.
 */
function newestSwapped<T>(ascending: readonly T[], max: number): T[] {
  if (ascending.length <= max) return newestFirst(ascending, max);
  const newest = newestFirst(ascending, max + 1);
  const hole = Math.floor(max / 2);
  return [...newest.slice(0, hole), ...newest.slice(hole + 1)];
}

function largestFirst<T>(ascending: readonly T[], valueOf: ((item: T) => number | null) | undefined): T[] {
  const ranked = ascending.map((item, i) => ({ item, i, v: valueOf?.(item) ?? Number.NEGATIVE_INFINITY }));
  // A later index is a later (or same-time, larger-id) event: ties go newest first, as 'newest' does.
  ranked.sort((a, b) => (a.v === b.v ? b.i - a.i : b.v > a.v ? 1 : -1));
  return ranked.map((r) => r.item);
}

function idAccessor<T>(order: KeepOrder, accessors: SelectionAccessors<T>): (item: T) => string {
  // No sensible default exists: ranking by anything but the id would silently test another order.
  if (accessors.idOf === undefined) throw new TypeError(`order '${order}' needs an idOf accessor`);
  return accessors.idOf;
}

function byId<T>(ascending: readonly T[], idOf: (item: T) => string, descending: boolean): T[] {
  // Ids are read once each: an accessor may build the id (tiled copies do).
  const ranked = ascending.map((item) => ({ item, id: idOf(item) }));
  const sign = descending ? -1 : 1;
  ranked.sort((a, b) => (a.id === b.id ? 0 : a.id < b.id ? -sign : sign));
  return ranked.map((r) => r.item);
}
