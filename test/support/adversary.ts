/**
 * A pure stand-in for any gateway the spec allows, for driving the truncation planner over
 * thousands of catalogs: per call it picks which events a truncated answer keeps (any of the
 * emulator's keep-orders, chosen by the emulator's own selection, or a fixed arbitrary order), and
 * it may treat either end as exclusive, ignore fractional seconds, report times in whole seconds
 * and cap answers below max_results.
 */
import { readFileSync } from 'node:fs';
import { createRng, dataFolder, deriveRng, loadUsgsCsv, type Rng } from '@gateway-ingest/emulator';
import { selectByOrder, type KeepOrder, type SelectionAccessors } from '@gateway-ingest/emulator';
import {
  advance,
  hintBackedBy,
  initialFrontier,
  nextQueries,
  preferOf,
  resumeRead,
  splitForLanes,
  taskKey,
  windowKnowledge,
  windowRegion,
  type Frontier,
  type Order,
  type Rate,
  type ReadKind,
  type Recount,
  type Region,
  type SeenEvent,
  type Step,
  type WindowKnowledge,
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
  /** Reported times truncated to this unit: 1000 whole seconds, 60,000 whole minutes (exact when absent). */
  reportedUnitMs?: number;
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

/** What one query asks: a region, and the stream's filters or a circle that replaces its own. */
export interface SimQuery {
  region: Region;
  circle?: { latitude: number; longitude: number; radiusKm: number } | null;
  minMagnitude?: number | null;
}

export type SimulatedGateway = ReturnType<typeof simulatedGateway>;

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
  /** Index of the first event at or after `t` in time order. */
  const firstAt = (t: number): number => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.timeMs < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    query(q: SimQuery, maxResults = 200): SeenEvent[] {
      calls++;
      const { region, circle = null, minMagnitude = null } = q;
      const lo = a.ignoreFraction ? Math.floor(region.lo / 1000) * 1000 : region.lo;
      const hi = a.ignoreFraction ? Math.floor(region.hi / 1000) * 1000 : region.hi;
      const startEx = flag(a.startExclusive);
      const endEx = flag(a.endExclusive);
      const matched: CatalogEvent[] = [];
      for (let i = firstAt(lo); i < sorted.length && sorted[i]!.timeMs <= hi; i++) {
        const e = sorted[i]!;
        if (startEx && e.timeMs === lo) continue;
        if (endEx && e.timeMs === hi) continue;
        if (minMagnitude !== null && e.magnitude < minMagnitude) continue;
        if (circle !== null && haversineKm(circle, e) > circle.radiusKm) continue;
        matched.push(e);
      }
      const kept = keep(matched, Math.min(maxResults, a.cap ?? maxResults));
      return kept.map((e) => ({
        id: e.id,
        timeMs: Math.floor(e.timeMs / (a.reportedUnitMs ?? 1)) * (a.reportedUnitMs ?? 1),
      }));
    },
  };
}

/** What the worker shares across windows: the cap facts and how often each order held. */
export interface SharedKnowledge {
  capFloor: number;
  measured: number | null;
  /** The cap last measured, kept when what was learned lapses. */
  measuredBefore: number | null;
  capRegion: Region | null;
  stats: Record<Order, { confirmed: number; refuted: number }>;
  /** What reads counted again of their stored events, older reads fading (gateway_knowledge). */
  recounted: Recount | null;
}

export function freshKnowledge(): SharedKnowledge {
  return {
    capFloor: 1,
    measured: null,
    measuredBefore: null,
    capRegion: null,
    stats: { newest: { confirmed: 0, refuted: 0 }, oldest: { confirmed: 0, refuted: 0 } },
    recounted: null,
  };
}

/** A shared knowledge whose cap is known to be `cap` (a probe measured it). */
export function knownCap(cap: number): SharedKnowledge {
  return { ...freshKnowledge(), capFloor: cap, measured: cap };
}

export interface WindowRun {
  calls: number;
  probes: number;
  /** Calls in the longest sequence of calls that waited on each other (all of them, run one at a time). */
  wall: number;
  stored: Set<string>;
  unresolved: Region[];
  failure: string | null;
  frontier: Frontier;
}

export interface RunOptions {
  circleCuts?: boolean;
  maxCalls?: number;
  /** The stream's filters (the probe asks without them). */
  minMagnitude?: number | null;
  /** What the database knows of the window's stream; a first read of a fresh one by default. */
  read?: ReadKind;
  proofs?: ReadonlyArray<{ lo: number; hi: number }>;
  /** Proofs of this stream and wider ones (default: `proofs`). */
  storedProofs?: ReadonlyArray<{ lo: number; hi: number }>;
  storedTimes?: readonly number[];
  nearby?: Rate | null;
  /** A saved frontier to resume instead of starting afresh. */
  resume?: Frontier;
  /** Killed once this many calls were sent (answers in flight lost): the frontier as saved is returned. */
  stopAfter?: number;
  /** The clock and GATEWAY_KNOWLEDGE_TTL_MS, for a resumed read's cap (default: never lapsed). */
  nowMs?: number;
  ttlMs?: number;
  /** With no order hint, guess newest-first anyway. */
  explore?: boolean;
}

export function runWindow(gateway: SimulatedGateway, window: Interval, k: SharedKnowledge, options: RunOptions = {}) {
  return runWindowConcurrently(gateway, window, k, { ...options, lanes: 1, seed: 1 });
}

/** The knowledge a worker would build for the window from `k` and what the database holds. */
export function knowledgeFor(window: Interval, k: SharedKnowledge, options: RunOptions): WindowKnowledge {
  return windowKnowledge({
    window,
    nowMs: options.nowMs ?? 0,
    read: options.read ?? { kind: 'first' },
    facts: {
      capFloor: k.capFloor,
      measured: k.measured,
      measuredBefore: k.measuredBefore,
      capRegion: k.capRegion,
      prefer: preferOf(k.stats),
      hintBacked: hintBackedBy(k.stats),
      recounted: k.recounted,
    },
    explore: options.explore ?? false,
    circleCuts: options.circleCuts ?? true,
    unfiltered: (options.minMagnitude ?? null) === null,
    proofs: options.proofs ?? [],
    storedProofs: options.storedProofs ?? options.proofs ?? [],
    storedTimes: options.storedTimes ?? [],
    nearby: options.nearby ?? null,
  });
}

/** Older recounts fade as the worker's do (gateway_knowledge `recordRecount`). */
const RECOUNT_FADE = 0.8;

/** What a read counted again since `before`, shared when it stops, as the worker records it. */
function shareRecount(k: SharedKnowledge, before: Recount, after: Recount): void {
  const stored = after.stored - before.stored;
  if (stored <= 0) return;
  const old = k.recounted ?? { stored: 0, added: 0 };
  k.recounted = {
    stored: RECOUNT_FADE * old.stored + stored,
    added: RECOUNT_FADE * old.added + after.added - before.added,
  };
}

/** What a landed answer teaches the shared knowledge, as the worker records it. */
function share(k: SharedKnowledge, step: Step, region: Region): void {
  if (step.learned.answerSize > k.capFloor || (step.learned.answerSize === k.capFloor && k.capRegion === null)) {
    k.capFloor = step.learned.answerSize;
    k.capRegion = region;
  }
  if (step.learned.measured !== null) k.measured = k.measuredBefore = step.learned.measured;
  for (const d of step.learned.confirmed) k.stats[d].confirmed++;
  for (const d of step.learned.refuted) k.stats[d].refuted++;
}

/**
 * A window run as a worker with idle capacity runs it: up to `lanes` queries in flight, long
 * chains cut into lanes whenever there is room, answers applied in a random order (`timed`: in
 * the order of simulated call durations). One lane is the plain sequential run.
 */
export function runWindowConcurrently(
  gateway: SimulatedGateway,
  window: Interval,
  k: SharedKnowledge,
  options: RunOptions & { lanes: number; seed: number; timed?: boolean },
): WindowRun {
  const rng = createRng(options.seed);
  const knowledge = knowledgeFor(window, k, options);
  let frontier = options.resume
    ? resumeRead(options.resume, knowledge, options.nowMs ?? 0, options.ttlMs ?? Infinity)
    : initialFrontier(window, knowledge, 1);
  const stored = new Set<string>();
  // `timed`: every call takes one time unit, give or take a fifth, and lanes are cut whenever there is room.
  const inFlight: Array<{ key: string; events: SeenEvent[]; region: Region; doneAt: number }> = [];
  let calls = 0;
  let probes = 0;
  let now = 0;
  const before = frontier.recount;
  const result = (failure: string | null): WindowRun => {
    shareRecount(k, before, frontier.recount);
    return run(failure);
  };
  const run = (failure: string | null): WindowRun => ({
    calls,
    probes,
    wall: options.lanes > 1 ? now : calls,
    stored,
    unresolved: frontier.unresolved,
    failure,
    frontier,
  });
  for (;;) {
    const busy = new Set(inFlight.map((q) => q.key));
    const room = options.lanes - inFlight.length;
    // Killed: the answers in flight are lost, their calls paid for.
    if (options.stopAfter !== undefined && calls >= options.stopAfter) return result(null);
    if (options.lanes > 1 && room > 0 && (options.timed || rng() < 0.7))
      frontier = splitForLanes(frontier, options.timed ? room : Math.ceil(rng() * room), (t) => busy.has(taskKey(t)));
    for (const { key, query } of nextQueries(frontier, busy, room)) {
      if (++calls > (options.maxCalls ?? 20_000)) throw new Error('no progress');
      if (query.purpose === 'probe') probes++;
      const filters = query.unfiltered ? {} : { minMagnitude: options.minMagnitude ?? null };
      // The gateway answers when asked; the answer is applied later, after others.
      const events = gateway.query({ region: query.region, circle: query.circle, ...filters });
      inFlight.push({ key, events, region: query.region, doneAt: now + 0.8 + 0.4 * rng() });
    }
    if (inFlight.length === 0) break;
    const next = options.timed
      ? inFlight.reduce((best, q, i) => (q.doneAt < inFlight[best]!.doneAt ? i : best), 0)
      : Math.floor(rng() * inFlight.length);
    const [done] = inFlight.splice(next, 1);
    now = Math.max(now, done!.doneAt);
    // A probe's events are outside the stream: audited, not stored.
    if (done!.key !== 'probe') done!.events.forEach((e) => stored.add(e.id));
    const step = advance(frontier, { events: done!.events }, done!.key);
    frontier = step.frontier;
    share(k, step, done!.region);
    if (step.failure) return result(step.failure);
  }
  return result(null);
}

/** The events of `c` inside window `w`, at magnitude `m` or more (every one when null). */
const eventsIn = (c: readonly CatalogEvent[], w: Interval, m: number | null) =>
  c.filter((e) => e.timeMs >= w.startMs && e.timeMs <= w.endMs && (m === null || e.magnitude >= m));

/** Events of the catalog that should have been stored for a window but were not. */
export function lostIn(
  catalog: readonly CatalogEvent[],
  window: Interval,
  run: Pick<WindowRun, 'stored' | 'unresolved'>,
  minMagnitude: number | null = null,
): CatalogEvent[] {
  const inUnresolved = (t: number) => run.unresolved.some((r) => t > r.lo && t < r.hi);
  return eventsIn(catalog, window, minMagnitude).filter((e) => !run.stored.has(e.id) && !inUnresolved(e.timeMs));
}

export { preferOf, windowRegion };

/** A USGS CSV file of the emulator's bundled data (or any path) as the simulated gateway's catalog. */
export function usgsCatalog(file: string): CatalogEvent[] {
  const path = file.includes('/') ? file : `${dataFolder}usgs/${file}`;
  return loadUsgsCsv(readFileSync(path, 'utf8')).map((e) => ({
    id: e.id,
    timeMs: Date.parse(e.time),
    magnitude: e.magnitude ?? -2,
    depthKm: e.depth_km ?? 0,
    latitude: e.latitude,
    longitude: e.longitude,
  }));
}

/** The two bundled real months. */
export const REAL_MONTH_FILES = ['all_month_2025-05-06_2025-06-05.csv', 'all_month_2025-08-19_2025-09-18.csv'] as const;

/**
 * A catalog with history before its last month, as the real one has: `earlier`'s events moved to
 * end a minute before `last` begins (sorted catalogs), then `last`'s.
 */
export function withHistory(earlier: readonly CatalogEvent[], last: readonly CatalogEvent[]): CatalogEvent[] {
  const shift = last[0]!.timeMs - earlier.at(-1)!.timeMs - 60_000;
  return [...earlier.map((e) => ({ ...e, timeMs: e.timeMs + shift })), ...last];
}

/**
 * A frontier as version 0.3.0 saved it (shape version 2), one walk left: what an upgrade finds in
 * `ingest_partitions.frontier`. `over` replaces any field.
 */
export function frontierV2(window: Interval, over: Record<string, unknown> = {}): Record<string, unknown> {
  const region = windowRegion(window);
  return {
    version: 2,
    window,
    capFloor: 1,
    prefer: 'newest',
    circleCuts: true,
    refuted: { newest: 0, oldest: 0 },
    confirmed: { newest: 0, oldest: 0 },
    tasks: [{ kind: 'walk', dir: 'down', region, reach: null, guessed: false, rate: null, sample: null, misses: 0 }],
    unresolved: [],
    placed: [],
    startedAtMs: 0,
    scope: [region],
    calls: 0,
    circleCalls: 0,
    eventsSeen: 0,
    provenMs: 0,
    ...over,
  };
}

type Span = { startMs: number; endMs: number };
const DAY_MS = 86_400_000;

/** 31-day windows (less 2 s) from an hour before a sorted catalog's first event to an hour after its last. */
export function monthWindows(catalog: readonly CatalogEvent[]): Span[] {
  const lo = catalog[0]!.timeMs - 3_600_000;
  const hi = catalog.at(-1)!.timeMs + 3_600_000;
  const out: Span[] = [];
  for (let s = lo; s < hi; s += 31 * DAY_MS - 2000)
    out.push({ startMs: s, endMs: Math.min(s + 31 * DAY_MS - 2000, hi) });
  return out;
}

/** `monthWindows` again, each moved later by each of `shiftDays` in turn: a re-read's windows starting elsewhere. */
export function shiftedMonthWindows(catalog: readonly CatalogEvent[], shiftDays: readonly number[]): Span[] {
  return shiftDays.flatMap((days) =>
    monthWindows(catalog).map((w) => ({ startMs: w.startMs + days * DAY_MS, endMs: w.endMs + days * DAY_MS })),
  );
}

/**
 * n events of a sorted real catalog in a 31-day window: drawn from all of it (`spread`, a filtered
 * stream's few events), or n in a row starting five days into the window (`padded`, a window
 * reaching past the data).
 */
export function smallWindow(catalog: readonly CatalogEvent[], n: number, padded: boolean, seed: number) {
  const rng = createRng(seed);
  if (padded) {
    const at = Math.floor(rng() * (catalog.length - n));
    const events = catalog.slice(at, at + n);
    const startMs = events[0]!.timeMs - 5 * DAY_MS;
    return { events, window: { startMs, endMs: startMs + 31 * DAY_MS - 2000 } };
  }
  const picked = new Set<number>();
  while (picked.size < n) picked.add(Math.floor(rng() * catalog.length));
  const startMs = catalog[0]!.timeMs - 1000;
  return {
    events: [...picked].sort((a, b) => a - b).map((i) => catalog[i]!),
    window: { startMs, endMs: startMs + 31 * DAY_MS - 2000 },
  };
}

/**
 * n events at uniform times in a window of `days` from a fixed start, a share `burst` of them in one
 * hour placed at random, in whole ms: the windows the cost properties and bench generate.
 */
export function generatedWindow(n: number, days: number, burst: number, seed: number) {
  const rng = createRng(seed);
  const startMs = Date.UTC(2025, 4, 6, 9, 24, 12, 345);
  const window = { startMs, endMs: startMs + days * DAY_MS - 2000 };
  const span = window.endMs - window.startMs;
  const at = startMs + rng() * (span - 3_600_000);
  const events: CatalogEvent[] = Array.from({ length: n }, (_, i) => ({
    id: `g${seed}-${i}`,
    timeMs: Math.floor(rng() < burst ? at + rng() * 3_600_000 : startMs + rng() * span),
    magnitude: Math.round(rng() * 60) / 10,
    latitude: 0,
    longitude: 0,
  }));
  return { events, window };
}

/**
 * A re-read of a sorted real catalog sized from the events a first read stored: 31-day windows on
 * the first read's boundaries and `shifts` days later (0 and 9 by default), `share` of the catalog
 * new since (at random times drawn from `seed`), newest-first, the cap known; calls, ideal, events
 * lost, the worst window's calls over its ideal, and the wait (time units, all windows).
 */
export function reReadCost(
  catalog: readonly CatalogEvent[],
  share: number,
  lanes: number,
  {
    seed = 3,
    shifts = [0, 9],
    learn = true,
    learned = null,
  }: {
    seed?: number;
    shifts?: readonly number[];
    /** Windows share one gateway's knowledge, as the worker's do; false: each starts from what it held first. */
    learn?: boolean;
    /** The share of new events the gateway's knowledge held before the first window (counted as 10,000 events). */
    learned?: number | null;
  } = {},
) {
  const rng = createRng(seed);
  const [lo, hi] = [catalog[0]!.timeMs, catalog.at(-1)!.timeMs];
  const added = Array.from({ length: Math.round(share * catalog.length) }, (_, i) => ({
    ...catalog[i]!,
    id: `new${i}`,
    timeMs: Math.round(lo + rng() * (hi - lo)),
  }));
  const now = [...catalog, ...added];
  const inside = (c: readonly CatalogEvent[], w: Span) => eventsIn(c, w, null);
  const t = { calls: 0, ideal: 0, lost: 0, worst: 0, wait: 0, recounted: 0, added: 0 };
  // One gateway's knowledge across the windows, read in turn: what one re-read counted sizes the next.
  const before = () => ({
    ...knownCap(200),
    recounted: learned === null ? null : { stored: 10_000, added: 10_000 * learned },
  });
  const k = before();
  for (const w of shiftedMonthWindows(catalog, shifts)) {
    const options = {
      read: { kind: 'refresh' as const },
      proofs: [{ lo: w.startMs, hi: w.endMs }],
      storedTimes: inside(catalog, w).map((e) => e.timeMs),
    };
    const g = simulatedGateway(now, { mode: 'newest' }, 1);
    const r = runWindowConcurrently(g, w, learn ? k : before(), {
      ...options,
      lanes,
      seed: 1,
      timed: lanes > 1,
    });
    const ideal = Math.max(1, Math.ceil(inside(now, w).length / 200));
    t.calls += r.calls;
    t.ideal += ideal;
    t.lost += lostIn(now, w, r).length + (r.failure ? 1 : 0);
    t.worst = Math.max(t.worst, r.calls - ideal);
    t.wait += r.wall;
    t.recounted += r.frontier.recount.stored;
    t.added += r.frontier.recount.added;
  }
  return t;
}

/** A window reaching past its catalog's data, and the filter that leaves its `n` events. */
export interface WindowPastTheData {
  catalog: readonly CatalogEvent[];
  window: Interval;
  minMagnitude: number | null;
  n: number;
}

/**
 * Windows of 1 to 31 days reaching past the data's end of one of the sorted `catalogs`, a minimum
 * magnitude leaving 201 to 399 events: a filtered stream's last window on a gateway whose data
 * stops, its first answer reaching the window's start and leaving the top quiet.
 */
export function filteredWindowsPastTheData(
  catalogs: ReadonlyArray<readonly CatalogEvent[]>,
  count: number,
  seed: number,
) {
  const pick = createRng(seed);
  const out: WindowPastTheData[] = [];
  while (out.length < count) {
    const catalog = catalogs[Math.floor(pick() * catalogs.length)]!;
    const days = 1 + Math.floor(pick() * 31);
    const startMs = Math.floor(catalog.at(-1)!.timeMs - days * DAY_MS + pick() * days * DAY_MS * 0.9);
    if (startMs < catalog[0]!.timeMs) continue;
    const window = { startMs, endMs: startMs + days * DAY_MS - 2000 };
    const mags = eventsIn(catalog, window, null)
      .map((e) => e.magnitude)
      .sort((a, b) => b - a);
    const n = 201 + Math.floor(pick() * 199);
    if (mags.length <= n || mags[n] === mags[n - 1]) continue;
    out.push({ catalog, window, minMagnitude: mags[n - 1]!, n });
  }
  return out;
}

/**
 * Dense windows of 1 to 31 days (every event, M1.5+ or M2.5+) reaching past the data's end or
 * before its start of the sorted `catalogs` in turn, a tenth to nine tenths of each inside the data.
 */
export function denseWindowsPastTheData(catalogs: ReadonlyArray<readonly CatalogEvent[]>, count: number, seed: number) {
  const pick = createRng(seed);
  return Array.from({ length: count }, (_, i): WindowPastTheData => {
    const catalog = catalogs[i % catalogs.length]!;
    const days = 1 + Math.floor(pick() * 31);
    const minMagnitude = [null, 1.5, 2.5][Math.floor(pick() * 3)]!;
    const after = pick() < 0.5;
    const share = 0.1 + 0.8 * pick();
    const startMs = Math.floor(
      after ? catalog.at(-1)!.timeMs - share * days * DAY_MS : catalog[0]!.timeMs - (1 - share) * days * DAY_MS,
    );
    const window = { startMs, endMs: startMs + days * DAY_MS - 1000 };
    return { catalog, window, minMagnitude, n: eventsIn(catalog, window, minMagnitude).length };
  });
}
