import { sampleInRandomOrder, type Rng } from './rng.js';

/**
 * Which events a capped answer holds. 'newest' is what USGS does by default; the other two exist
 * so tests can check that a client never assumes the gateway's order (the spec leaves it open).
 */
export const EVENT_ORDERS = ['newest', 'oldest', 'random'] as const;
export type EventOrder = (typeof EVENT_ORDERS)[number];

export interface Selection<T> {
  items: T[];
  truncated: boolean;
}

/** `ascending` is oldest first; at most `max` items come back, arranged as `order` says. */
export function selectByOrder<T>(ascending: readonly T[], max: number, order: EventOrder, rng: Rng): Selection<T> {
  const truncated = ascending.length > max;
  if (order === 'random') return { items: sampleInRandomOrder(ascending, max, rng), truncated };
  if (order === 'oldest') return { items: ascending.slice(0, max), truncated };
  return { items: ascending.slice(Math.max(0, ascending.length - max)).reverse(), truncated };
}
