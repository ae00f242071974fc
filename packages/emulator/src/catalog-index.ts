import type { EarthquakeEvent } from './spec.js';
import type { Circle } from './spec.js';
import { haversineKm } from './spec.js';

/** Repeat the base catalog back to back so that [from, to] is covered (scale tests, benchmarks). */
export interface TileSpec {
  from: Date;
  to: Date;
}

/** Both window ends inclusive, in epoch milliseconds. */
export interface EventQuery {
  startMs: number;
  endMs: number;
  minMagnitude?: number | undefined;
  /** An event exactly at minMagnitude does not match. */
  minMagnitudeExclusive?: boolean | undefined;
  circle?: Circle | undefined;
}

/** A match: a base event seen in tile `tile`, at its shifted time. */
export interface EventRef {
  event: EarthquakeEvent;
  tile: number;
  timeMs: number;
}

export function materialize(ref: EventRef): EarthquakeEvent {
  if (ref.tile === 0) return ref.event;
  return { ...ref.event, id: tileEventId(ref.event.id, ref.tile), time: new Date(ref.timeMs).toISOString() };
}

/** Id of an event in tile k; tile 0 is the real catalog and keeps the real ids. */
export function tileEventId(id: string, k: number): string {
  return k === 0 ? id : `${id}~t${k}`;
}

/** One tile's length: the base span plus a second, whole seconds, so tiles never overlap. */
export function tileSpanMs(minMs: number, maxMs: number): number {
  return Math.ceil((maxMs - minMs + 1000) / 1000) * 1000;
}

function lowerBound(times: Float64Array, x: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(times: Float64Array, x: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Keyed {
  e: EarthquakeEvent;
  t: number;
}

const byTimeThenId = (a: Keyed, b: Keyed): number => a.t - b.t || (a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0);

const precedes = (x: Keyed, t: number, id: string): boolean => x.t < t || (x.t === t && x.e.id < id);

/** Events already in (time, id) order with their parsed times: builds an index without sorting. */
class SortedEvents {
  constructor(
    readonly events: EarthquakeEvent[],
    readonly times: Float64Array,
  ) {}
}

/**
 * Events sorted by (time, id). Tiles are never materialised: a query finds the tiles its window
 * overlaps and binary-searches the base array with the window shifted back, so ten years of tiles
 * cost no memory beyond the base catalog.
 */
export class CatalogIndex {
  private readonly events: readonly EarthquakeEvent[];
  private readonly times: Float64Array;
  /** Tiled bounds; without tiling the base catalog is served as it is. */
  readonly tile: { fromMs: number; toMs: number; spanMs: number } | null;

  constructor(events: readonly EarthquakeEvent[] | SortedEvents, tile?: TileSpec) {
    if (events instanceof SortedEvents) {
      this.events = events.events;
      this.times = events.times;
    } else {
      const keyed = events.map((e) => ({ e, t: Date.parse(e.time) }));
      keyed.sort(byTimeThenId);
      this.events = keyed.map((k) => k.e);
      this.times = Float64Array.from(keyed, (k) => k.t);
    }
    if (tile && this.events.length > 0) {
      const fromMs = tile.from.getTime();
      const toMs = tile.to.getTime();
      if (!(fromMs <= toMs)) throw new RangeError('tile.from must not be after tile.to');
      const spanMs = tileSpanMs(this.times[0] as number, this.times[this.times.length - 1] as number);
      this.tile = { fromMs, toMs, spanMs };
    } else {
      this.tile = null;
    }
  }

  /** Number of real (untiled) events. */
  get baseSize(): number {
    return this.events.length;
  }

  /** The real (untiled) events, oldest first (ties by id); a copy. */
  baseEvents(): EarthquakeEvent[] {
    return this.events.slice();
  }

  /** The real (untiled) events with startMs <= time <= endMs, oldest first; a copy. */
  baseEventsBetween(startMs: number, endMs: number): EarthquakeEvent[] {
    return this.events.slice(lowerBound(this.times, startMs), upperBound(this.times, endMs));
  }

  /**
   * A new index without the events whose ids are in `remove` and with `add`; this one is left as
   * it was, so a query holding it keeps a consistent catalog. One merge pass, and only the added
   * times are parsed: a live tick on the 10k-event month takes about 1 ms, a full rebuild 5-10.
   */
  withChanges(remove: ReadonlySet<string>, add: readonly EarthquakeEvent[]): CatalogIndex {
    const extra = add.map((e) => ({ e, t: Date.parse(e.time) })).sort(byTimeThenId);
    const events: EarthquakeEvent[] = [];
    // An upper bound: `remove` may name ids this index does not hold.
    const times = new Float64Array(this.events.length + extra.length);
    let j = 0;
    const push = (e: EarthquakeEvent, t: number): void => {
      times[events.length] = t;
      events.push(e);
    };
    for (let i = 0; i < this.events.length; i++) {
      const e = this.events[i] as EarthquakeEvent;
      if (remove.has(e.id)) continue;
      const t = this.times[i] as number;
      while (j < extra.length && precedes(extra[j] as Keyed, t, e.id)) {
        const x = extra[j++] as Keyed;
        push(x.e, x.t);
      }
      push(e, t);
    }
    for (const x of extra.slice(j)) push(x.e, x.t);
    const tile = this.tile ? { from: new Date(this.tile.fromMs), to: new Date(this.tile.toMs) } : undefined;
    return new CatalogIndex(new SortedEvents(events, times.subarray(0, events.length)), tile);
  }

  /** Matching events oldest first (ties by id), with tile ids and shifted times. */
  query(q: EventQuery): EarthquakeEvent[] {
    return this.matchRefs(q).map(materialize);
  }

  /**
   * Matches as references, oldest first: a capped answer materialises only the events it keeps,
   * which matters when a tiled 31-day window matches ten thousand events.
   */
  matchRefs(q: EventQuery): EventRef[] {
    const out: EventRef[] = [];
    this.scan(q, (event, tile, timeMs) => {
      out.push({ event, tile, timeMs });
    });
    return out;
  }

  /** Same matches as `query`, counted without building anything (for tiled spans of years). */
  count(q: EventQuery): number {
    let n = 0;
    this.scan(q, () => {
      n++;
    });
    return n;
  }

  private scan(q: EventQuery, visit: (e: EarthquakeEvent, k: number, timeMs: number) => void): void {
    if (this.events.length === 0) return;
    const baseMin = this.times[0] as number;
    let start = q.startMs;
    let end = q.endMs;
    let kFirst = 0;
    let kLast = 0;
    let span = 0;
    if (this.tile) {
      start = Math.max(start, this.tile.fromMs);
      end = Math.min(end, this.tile.toMs);
      span = this.tile.spanMs;
      kFirst = Math.floor((start - baseMin) / span);
      kLast = Math.floor((end - baseMin) / span);
    }
    if (start > end) return;
    const accepts = matcher(q);
    for (let k = kFirst; k <= kLast; k++) {
      const shift = k * span;
      const hi = upperBound(this.times, end - shift);
      for (let i = lowerBound(this.times, start - shift); i < hi; i++) {
        const e = this.events[i] as EarthquakeEvent;
        if (accepts(e)) visit(e, k, (this.times[i] as number) + shift);
      }
    }
  }
}

function matcher(q: EventQuery): (e: EarthquakeEvent) => boolean {
  const { minMagnitude, circle } = q;
  return (e) => {
    if (minMagnitude !== undefined && (e.magnitude === null || e.magnitude < minMagnitude)) return false;
    if (q.minMagnitudeExclusive && e.magnitude === minMagnitude) return false;
    if (circle && haversineKm(circle.latitude, circle.longitude, e.latitude, e.longitude) > circle.radiusKm) {
      return false;
    }
    return true;
  };
}
