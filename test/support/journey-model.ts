/**
 * The pipeline as a pure model, for journeys of many steps on one database: a backfill planned as
 * src/ingest/enqueue-backfill.ts plans it (done windows skipped, unfinished ones taken over, a
 * refresh resetting every window), each window read as src/worker/earthquake-window.ts reads it
 * (a saved frontier resumed, a partial window's intervals retried, a first read skipping what is
 * proven) by the product's planner against a simulated gateway, and what the database keeps across
 * steps: stored events, coverage proofs, partitions with their frontiers, the shared gateway facts
 * and the clock against the knowledge TTL. Only the planner is the product's; the rest mirrors it.
 */
import { applyProof, covers, type Proof } from '../../src/domain/proofs.js';
import type { Interval } from '../../src/domain/interval.js';
import { createRng } from '@gateway-ingest/emulator';
import { DAY_MS, SECOND_MS } from '../../src/domain/time.js';
import { planWindows, windowKey } from '../../src/planning/windows.js';
import {
  MIN_NEARBY_EVENTS,
  nearbyStretches,
  provenIntervals,
  type Frontier,
  type Rate,
  type ReadKind,
  type Region,
} from '../../src/planning/truncation/index.js';
import {
  freshKnowledge,
  runWindowConcurrently,
  simulatedGateway,
  type Adversary,
  type CatalogEvent,
  type SharedKnowledge,
  type SimulatedGateway,
} from './adversary.js';

type State = 'pending' | 'running' | 'done' | 'partial' | 'failed';

interface Partition {
  window: Interval;
  state: State;
  frontier: Frontier | null;
  skipProven: boolean;
}

interface Stream {
  minMagnitude: number | null;
  proofs: Proof[];
  partitions: Map<string, Partition>;
}

export interface WindowReport {
  window: Interval;
  calls: number;
  probes: number;
  /** max(1, ⌈n/cap⌉) for the events of the window the read was asked to cover. */
  ideal: number;
  state: State;
  unresolved: Region[];
  failure: string | null;
  /** Proven this step: closed intervals of epoch ms. */
  proven: Array<{ lo: number; hi: number }>;
  /** Where the read's cap probes would ask. */
  probeRegions: Region[];
  /** The window was proven complete (for this stream or a wider one) before the read: its events are stored. */
  known: boolean;
  /** The read met more than a cap of events within two seconds: calls cut by place, and the search for it. */
  crowded: boolean;
  circleCalls: number;
  kind: ReadKind['kind'] | 'resume' | 'skipped';
}

export interface StepReport {
  windows: WindowReport[];
  calls: number;
  probes: number;
  ideal: number;
}

export interface BackfillStep {
  minMagnitude: number | null;
  fromMs: number;
  toMs: number;
  refresh: boolean;
  /** A worker killed after this many calls of the step (answers in flight lost), or null. */
  killAfter: number | null;
  lanes: number;
}

/* Generated catalogs for journeys. */
export const T0 = Date.UTC(2024, 0, 1);
const MONTH = 31 * DAY_MS - 2_000;
export const MONTHS = 8;
export const SPAN = MONTHS * MONTH;

export type Density = 'empty' | 'quiet' | 'medium' | 'dense';
const COUNTS: Record<Density, [number, number]> = {
  empty: [0, 0],
  quiet: [1, 150],
  medium: [300, 900],
  dense: [1200, 2400],
};

/** Magnitudes as a catalog has them: many small ones, a tenth at 2.5 or more, a few at 4 or more. */
export const magnitude = (rng: () => number) => Math.round((-0.5 - Math.log(1 - rng()) / 0.75) * 100) / 100;

/**
 * A catalog of MONTHS months, each empty, quiet, medium or dense, with aftershock bursts (a
 * mainshock, then events whose delays fall off as 1/t) and, rarely, more than a cap of events in
 * one second at one place.
 */
export function journeyCatalog(seed: number, densities: Density[], bursts: number, swarm: boolean): CatalogEvent[] {
  const rng = createRng(seed);
  const out: CatalogEvent[] = [];
  const event = (timeMs: number, lat = Math.asin(2 * rng() - 1) * (180 / Math.PI), lon = rng() * 360 - 180) =>
    out.push({
      id: `j${seed}-${out.length}`,
      timeMs: Math.round(timeMs),
      magnitude: magnitude(rng),
      latitude: lat,
      longitude: lon,
    });
  densities.forEach((d, m) => {
    const [lo, hi] = COUNTS[d];
    const n = lo + Math.floor(rng() * (hi - lo + 1));
    for (let i = 0; i < n; i++) event(T0 + m * MONTH + rng() * MONTH);
  });
  for (let b = 0; b < bursts; b++) {
    const at = T0 + rng() * SPAN;
    const n = 100 + Math.floor(rng() * 500);
    for (let i = 0; i < n; i++) event(at + 60_000 * (Math.pow(1 + 2000 * rng(), 1.5) - 1));
  }
  if (swarm) {
    const at = Math.floor((T0 + rng() * SPAN) / 1000) * 1000;
    for (let i = 0; i < 230; i++) event(at + Math.floor(rng() * 900), 35, 139);
  }
  return out.filter((e) => e.timeMs >= T0 - DAY_MS && e.timeMs <= T0 + SPAN + DAY_MS);
}

const matches = (e: CatalogEvent, minMagnitude: number | null) => minMagnitude === null || e.magnitude >= minMagnitude;

export class JourneyModel {
  catalog: CatalogEvent[];
  adversary: Adversary;
  gateway: SimulatedGateway;
  shared: SharedKnowledge = freshKnowledge();
  /** The events table: every event an answer returned, by id (a later answer replaces it). */
  stored = new Map<string, CatalogEvent>();
  streams = new Map<string, Stream>();
  nowMs = Date.UTC(2026, 0, 1);
  private seed: number;

  constructor(
    catalog: CatalogEvent[],
    adversary: Adversary,
    seed: number,
    readonly ttlMs = 3_600_000,
  ) {
    this.catalog = catalog;
    this.adversary = adversary;
    this.seed = seed;
    this.gateway = simulatedGateway(catalog, adversary, seed);
  }

  /** The gateway's real cap. */
  get cap(): number {
    return Math.min(200, this.adversary.cap ?? 200);
  }

  /** What was learned of the gateway lapses (an hour passes): the cap, and the share of new events re-reads counted. */
  lapse(): void {
    this.nowMs += this.ttlMs + 1;
    this.shared = { ...this.shared, capFloor: 1, measured: null, recounted: null };
  }

  /** The gateway changes its ways (order, cap) or its catalog. A cap change comes with a lapse: the one assumption. */
  setGateway(adversary: Adversary, catalog = this.catalog): void {
    if ((adversary.cap ?? 200) !== (this.adversary.cap ?? 200)) this.lapse();
    this.adversary = adversary;
    this.catalog = catalog;
    this.gateway = simulatedGateway(catalog, adversary, ++this.seed);
  }

  private stream(minMagnitude: number | null): Stream {
    const key = `m${minMagnitude ?? 'all'}`;
    let s = this.streams.get(key);
    if (!s) {
      s = { minMagnitude, proofs: [], partitions: new Map() };
      this.streams.set(key, s);
    }
    return s;
  }

  /** Plans as enqueueEarthquake does: done windows skipped, unfinished ones taken over, a refresh resets all. */
  private plan(s: Stream, step: BackfillStep): Interval[] {
    const parts = [...s.partitions.values()];
    const covered = step.refresh ? [] : parts.filter((p) => p.state === 'done').map((p) => p.window);
    const adopted = step.refresh
      ? []
      : parts
          .filter((p) => p.state !== 'done' && p.window.startMs <= step.toMs && p.window.endMs >= step.fromMs)
          .map((p) => p.window);
    const windows = [
      ...adopted,
      ...planWindows({ fromMs: step.fromMs, toMs: step.toMs, coveredMs: [...covered, ...adopted] }),
    ];
    for (const w of windows) {
      const key = windowKey(w);
      const p = s.partitions.get(key);
      if (!p) s.partitions.set(key, { window: w, state: 'pending', frontier: null, skipProven: !step.refresh });
      else if (step.refresh) s.partitions.set(key, { ...p, state: 'pending', frontier: null, skipProven: false });
      else if (p.state !== 'done' && p.state !== 'running') p.state = 'pending';
    }
    return windows;
  }

  /** One backfill (or refresh) run to its end, as `backfill --wait --inline` runs it. */
  backfill(step: BackfillStep): StepReport {
    const s = this.stream(step.minMagnitude);
    const report: StepReport = { windows: [], calls: 0, probes: 0, ideal: 0 };
    let budget = step.killAfter;
    for (const w of this.plan(s, step)) {
      const r = this.read(s, windowKey(w), step.lanes, budget);
      report.windows.push(r);
      report.calls += r.calls;
      report.probes += r.probes;
      report.ideal += r.kind === 'skipped' ? 0 : r.ideal;
      if (budget !== null) budget = Math.max(0, budget - r.calls);
    }
    // The killed worker's windows are taken up by the next process: here, at once.
    if (step.killAfter !== null)
      for (const w of report.windows.filter((x) => x.state === 'running')) {
        const r = this.read(s, windowKey(w.window), step.lanes, null);
        report.calls += r.calls;
        report.probes += r.probes;
        Object.assign(w, { ...r, calls: w.calls + r.calls, probes: w.probes + r.probes, ideal: w.ideal });
      }
    return report;
  }

  private storedTimes(minMagnitude: number | null, w: Interval): number[] {
    const out: number[] = [];
    for (const e of this.stored.values())
      if (matches(e, minMagnitude) && e.timeMs >= w.startMs - SECOND_MS && e.timeMs <= w.endMs + SECOND_MS)
        out.push(e.timeMs);
    return out.sort((a, b) => a - b);
  }

  /** As the worker reads it: the first proven stretch near the window holding enough of the stream's events. */
  private nearby(minMagnitude: number | null, proofs: readonly Proof[], w: Interval): Rate | null {
    for (const [lo, hi] of nearbyStretches(proofs, w)) {
      let n = 0;
      for (const e of this.stored.values()) if (matches(e, minMagnitude) && e.timeMs >= lo && e.timeMs <= hi) n++;
      if (n >= MIN_NEARBY_EVENTS) return { events: n, ms: hi - lo };
    }
    return null;
  }

  private idealOf(minMagnitude: number | null, w: Interval): number {
    const n = this.catalog.filter((e) => matches(e, minMagnitude) && e.timeMs >= w.startMs && e.timeMs <= w.endMs);
    return Math.max(1, Math.ceil(n.length / this.cap));
  }

  /** One window as the worker reads it; `killAfter`: calls before the worker dies (null: it does not). */
  private read(s: Stream, key: string, lanes: number, killAfter: number | null): WindowReport {
    const p = s.partitions.get(key)!;
    const wider = [...this.streams.values()].filter(
      (o) => o.minMagnitude === null || (s.minMagnitude !== null && o.minMagnitude <= s.minMagnitude),
    );
    const storedProofs = wider.flatMap((o) => o.proofs).sort((a, b) => a.lo - b.lo);
    const known = covers(storedProofs, p.window.startMs, p.window.endMs, SECOND_MS);
    const base = {
      window: p.window,
      ideal: this.idealOf(s.minMagnitude, p.window),
      proven: [],
      probeRegions: [],
      known,
      crowded: false,
      circleCalls: 0,
    };
    if (p.state === 'done')
      return { ...base, calls: 0, probes: 0, state: 'done', unresolved: [], failure: null, kind: 'skipped' };
    const saved = p.frontier;
    const resume = saved !== null && (saved.tasks.length > 0 || p.state === 'running');
    const kind: WindowReport['kind'] = resume
      ? 'resume'
      : saved !== null && saved.unresolved.length > 0
        ? 'retry'
        : p.skipProven
          ? 'first'
          : 'refresh';
    const read: ReadKind =
      kind === 'retry'
        ? { kind: 'retry', regions: saved!.unresolved }
        : { kind: kind === 'refresh' ? 'refresh' : 'first' };
    const run = runWindowConcurrently(this.gateway, p.window, this.shared, {
      lanes,
      seed: ++this.seed,
      minMagnitude: s.minMagnitude,
      read,
      proofs: s.proofs,
      storedProofs,
      storedTimes: this.storedTimes(s.minMagnitude, p.window),
      nearby: this.nearby(s.minMagnitude, storedProofs, p.window),
      resume: resume && saved !== null ? saved : undefined,
      stopAfter: killAfter ?? undefined,
      nowMs: this.nowMs,
      ttlMs: this.ttlMs,
    });
    for (const id of run.stored) {
      const e = this.catalogById().get(id);
      if (e) this.stored.set(id, e);
    }
    const finished = run.failure === null && run.frontier.tasks.length === 0;
    const state: State = run.failure
      ? 'failed'
      : !finished
        ? 'running'
        : run.unresolved.length > 0
          ? 'partial'
          : 'done';
    const proven = finished ? provenIntervals(run.frontier) : [];
    for (const x of proven) s.proofs = applyProof(s.proofs, { ...x, provenAtMs: this.nowMs });
    Object.assign(p, { state, frontier: run.frontier });
    const f = run.frontier;
    return {
      ...base,
      calls: run.calls,
      probes: run.probes,
      state,
      unresolved: run.unresolved,
      failure: run.failure,
      proven,
      probeRegions: f.cap.probeRegions,
      crowded: f.placed.length > 0,
      circleCalls: f.circleCalls,
      kind,
    };
  }

  private byId: { catalog: CatalogEvent[]; map: Map<string, CatalogEvent> } | null = null;
  private catalogById(): Map<string, CatalogEvent> {
    if (this.byId?.catalog !== this.catalog)
      this.byId = { catalog: this.catalog, map: new Map(this.catalog.map((e) => [e.id, e])) };
    return this.byId.map;
  }

  /** Catalog events of the stream inside what the step proved that the table does not hold. */
  lost(minMagnitude: number | null, report: StepReport): CatalogEvent[] {
    const proven = report.windows.flatMap((w) => w.proven);
    return this.catalog.filter(
      (e) =>
        matches(e, minMagnitude) && proven.some((x) => e.timeMs >= x.lo && e.timeMs <= x.hi) && !this.stored.has(e.id),
    );
  }

  /**
   * Whether an answer over `region` could be shown a proof: some probe region holds more events
   * (unfiltered, up to the cap) than the stream has there. Where none does, the cap cannot be
   * measured and a partial window is the honest answer.
   */
  measurable(minMagnitude: number | null, region: Region, probeRegions: readonly Region[]): boolean {
    const inside = (r: Region, m: number | null) =>
      this.catalog.filter((e) => matches(e, m) && e.timeMs > r.lo && e.timeMs < r.hi).length;
    const here = Math.min(this.cap, inside(region, minMagnitude));
    return probeRegions.some((r) => Math.min(this.cap, inside(r, null)) > here);
  }

  /** Whether `region` truly holds more than a cap of the stream's events within two seconds. */
  crowded(minMagnitude: number | null, region: Region): boolean {
    const times = this.catalog
      .filter((e) => matches(e, minMagnitude) && e.timeMs > region.lo - SECOND_MS && e.timeMs < region.hi + SECOND_MS)
      .map((e) => e.timeMs)
      .sort((a, b) => a - b);
    for (let i = 0, j = 0; j < times.length; j++) {
      while (times[j]! - times[i]! > 2 * SECOND_MS) i++;
      if (j - i + 1 > this.cap) return true;
    }
    return false;
  }
}
