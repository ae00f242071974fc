/**
 * A pure stand-in for any gateway the spec allows, for driving the truncation planner over
 * thousands of catalogs: per call it picks which events a truncated answer keeps (any of the
 * emulator's keep-orders, chosen by the emulator's own selection, or a fixed arbitrary order), and
 * it may treat either end as exclusive, ignore fractional seconds, report times in whole seconds
 * and cap answers below max_results.
 */
import { createRng, deriveRng, type Rng } from '@gateway-ingest/emulator';
import { selectByOrder, type KeepOrder, type SelectionAccessors } from '@gateway-ingest/emulator';
import {
  advance,
  initialFrontier,
  nextQueries,
  preferOf,
  splitForLanes,
  taskKey,
  windowRegion,
  type Direction,
  type Region,
  type SeenEvent,
} from '../../src/planning/truncation/index.js';
import type { Interval } from '../../src/domain/interval.js';

export interface CatalogEvent {
  id: string;
  /** True time, whole milliseconds like the USGS feed. */
  timeMs: number;
  magnitude: number;
  latitude: number;
  longitude: number;
  /** For mode 'depth'; 0 when absent. */
  depthKm?: number;
}

/**
 * The emulator's keep-orders, plus 'permutation': one arbitrary total order over the catalog, drawn
 * once per gateway from its seed; a truncated answer keeps the matched events that come first in
 * it. Unlike time, magnitude, depth or id, nothing the client sees tells it that order, yet it is
 * consistent under restriction, as a database's index order would be.
 */
export type Mode = KeepOrder | 'permutation';

export interface Adversary {
  /** The keep-order of each call; `mixed` draws it per call. */
  mode: Mode | { mixed: Array<[Mode, number]> };
  startExclusive?: boolean | 'sometimes';
  endExclusive?: boolean | 'sometimes';
  ignoreFraction?: boolean;
  wholeSecondTimes?: boolean;
  /** The real cap, below max_results for a silently capped gateway. */
  cap?: number;
}

const RAD = Math.PI / 180;
function haversineKm(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const dLat = (b.latitude - a.latitude) * RAD;
  const dLon = (b.longitude - a.longitude) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * RAD) * Math.cos(b.latitude * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h)));
}

const CATALOG_ACCESSORS: SelectionAccessors<CatalogEvent> = {
  idOf: (e) => e.id,
  magnitudeOf: (e) => e.magnitude,
  depthOf: (e) => e.depthKm ?? 0,
};

/** Each catalog event's place in a uniformly random order of the whole catalog. */
function randomRanks(catalog: readonly CatalogEvent[], rng: Rng): Map<CatalogEvent, number> {
  const order = [...catalog];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return new Map(order.map((e, rank) => [e, rank]));
}

/** The `max` items that come first in the fixed order `rankOf`, in that order. */
export function keepFirstByRank<T>(matched: readonly T[], max: number, rankOf: (item: T) => number): T[] {
  return matched
    .map((item) => ({ item, rank: rankOf(item) }))
    .sort((x, y) => x.rank - y.rank)
    .slice(0, max)
    .map((r) => r.item);
}

export function simulatedGateway(catalog: readonly CatalogEvent[], a: Adversary, seed: number) {
  const rng = createRng(seed);
  const sorted = [...catalog].sort((x, y) => x.timeMs - y.timeMs);
  // Drawn on first use from a stream of its own, so gateways that never use it draw exactly as before.
  // Ranked by the event object rather than its id, so a catalog repeating an id still has a total order.
  let ranks: Map<CatalogEvent, number> | null = null;
  const rankOf = (e: CatalogEvent): number => {
    ranks ??= randomRanks(catalog, deriveRng(seed, 'permutation'));
    return ranks.get(e)!;
  };
  const pick = (): Mode => {
    if (typeof a.mode === 'string') return a.mode;
    let r = rng();
    for (const [m, p] of a.mode.mixed) {
      if (r < p) return m;
      r -= p;
    }
    return a.mode.mixed.at(-1)![0];
  };
  const keep = (matched: CatalogEvent[], cap: number): CatalogEvent[] => {
    // An answer holding every match needs no keep-order (and draws none): it comes oldest first,
    // one of the orders the spec allows.
    if (matched.length <= cap) return matched;
    const mode = pick();
    if (mode === 'permutation') return keepFirstByRank(matched, cap, rankOf);
    return selectByOrder(matched, cap, mode, rng, CATALOG_ACCESSORS).items;
  };
  const flag = (v: boolean | 'sometimes' | undefined) => (v === 'sometimes' ? rng() < 0.5 : Boolean(v));
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    query(
      region: Region,
      circle: { latitude: number; longitude: number; radiusKm: number } | null,
      maxResults = 200,
    ): SeenEvent[] {
      calls++;
      const lo = a.ignoreFraction ? Math.floor(region.lo / 1000) * 1000 : region.lo;
      const hi = a.ignoreFraction ? Math.floor(region.hi / 1000) * 1000 : region.hi;
      const startEx = flag(a.startExclusive);
      const endEx = flag(a.endExclusive);
      const matched = sorted.filter(
        (e) =>
          (startEx ? e.timeMs > lo : e.timeMs >= lo) &&
          (endEx ? e.timeMs < hi : e.timeMs <= hi) &&
          (circle === null || haversineKm(circle, e) <= circle.radiusKm),
      );
      const kept = keep(matched, Math.min(maxResults, a.cap ?? maxResults));
      return kept.map((e) => ({
        id: e.id,
        timeMs: a.wholeSecondTimes ? Math.floor(e.timeMs / 1000) * 1000 : e.timeMs,
      }));
    },
  };
}

/** What the worker shares across windows: the cap floor and how often each order held. */
export interface SharedKnowledge {
  capFloor: number;
  stats: Record<Direction, { confirmed: number; refuted: number }>;
}

export function freshKnowledge(): SharedKnowledge {
  return { capFloor: 1, stats: { newest: { confirmed: 0, refuted: 0 }, oldest: { confirmed: 0, refuted: 0 } } };
}

export interface WindowRun {
  calls: number;
  /** Calls in the longest sequence of calls that waited on each other (all of them, run one at a time). */
  wall: number;
  stored: Set<string>;
  unresolved: Region[];
  failure: string | null;
}

export function runWindow(
  gateway: ReturnType<typeof simulatedGateway>,
  window: Interval,
  k: SharedKnowledge,
  options: { circleCuts?: boolean; maxCalls?: number } = {},
): WindowRun {
  return runWindowConcurrently(gateway, window, k, { ...options, lanes: 1, seed: 1 });
}

/**
 * A window run as a worker with idle capacity runs it: up to `lanes` queries in flight, long
 * chains cut into lanes whenever there is room, answers applied in a random order (`timed`: in
 * the order of simulated call durations). One lane is the plain sequential run.
 */
export function runWindowConcurrently(
  gateway: ReturnType<typeof simulatedGateway>,
  window: Interval,
  k: SharedKnowledge,
  options: { lanes: number; seed: number; circleCuts?: boolean; maxCalls?: number; timed?: boolean },
): WindowRun {
  const rng = createRng(options.seed);
  let frontier = initialFrontier(window, {
    capFloor: k.capFloor,
    prefer: preferOf(k.stats),
    circleCuts: options.circleCuts ?? true,
  });
  const stored = new Set<string>();
  // `timed`: every call takes one time unit, give or take a fifth, and lanes are cut whenever there is room.
  const inFlight: Array<{ key: string; events: SeenEvent[]; doneAt: number }> = [];
  let calls = 0;
  let now = 0;
  for (;;) {
    const busy = new Set(inFlight.map((q) => q.key));
    const room = options.lanes - inFlight.length;
    if (options.lanes > 1 && room > 0 && (options.timed || rng() < 0.7))
      frontier = splitForLanes(frontier, options.timed ? room : Math.ceil(rng() * room), (t) => busy.has(taskKey(t)));
    for (const { key, query } of nextQueries(frontier, busy, room)) {
      if (++calls > (options.maxCalls ?? 20_000)) throw new Error('no progress');
      // The gateway answers when asked; the answer is applied later, after others.
      inFlight.push({ key, events: gateway.query(query.region, query.circle), doneAt: now + 0.8 + 0.4 * rng() });
    }
    if (inFlight.length === 0) break;
    const next = options.timed
      ? inFlight.reduce((best, q, i) => (q.doneAt < inFlight[best]!.doneAt ? i : best), 0)
      : Math.floor(rng() * inFlight.length);
    const [done] = inFlight.splice(next, 1);
    now = Math.max(now, done!.doneAt);
    done!.events.forEach((e) => stored.add(e.id));
    const step = advance(frontier, { events: done!.events }, done!.key);
    frontier = step.frontier;
    k.capFloor = Math.max(k.capFloor, step.learned.answerSize);
    for (const d of step.learned.confirmed) k.stats[d].confirmed++;
    for (const d of step.learned.refuted) k.stats[d].refuted++;
    if (step.failure)
      return {
        calls,
        wall: options.lanes > 1 ? now : calls,
        stored,
        unresolved: frontier.unresolved,
        failure: step.failure,
      };
  }
  return { calls, wall: options.lanes > 1 ? now : calls, stored, unresolved: frontier.unresolved, failure: null };
}

/** Events of the catalog that should have been stored for a window but were not. */
export function lostIn(catalog: readonly CatalogEvent[], window: Interval, run: WindowRun): CatalogEvent[] {
  const inUnresolved = (t: number) => run.unresolved.some((r) => t > r.lo && t < r.hi);
  return catalog.filter(
    (e) => e.timeMs >= window.startMs && e.timeMs <= window.endMs && !run.stored.has(e.id) && !inUnresolved(e.timeMs),
  );
}

export { preferOf, windowRegion };
