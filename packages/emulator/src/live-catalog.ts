import type { EarthquakeEvent } from './spec.js';
import { CatalogIndex, type TileSpec } from './catalog-index.js';
import { sourceEvents } from './data.js';
import { addedEvent, liveEventId, revisedEvent, type WindowMs } from './live-events.js';
import { deriveRng, sampleInRandomOrder, type Rng } from './rng.js';
import type { SwarmSpec } from './swarm.js';

export interface LiveWindow {
  from: Date;
  to: Date;
}

/** How many changes of each kind one `mutate` makes; each a whole number >= 0, default 0. */
export interface LiveCounts {
  add?: number;
  revise?: number;
  delete?: number;
}

export type LiveChangeKind = 'add' | 'revise' | 'delete';

/** One change: `before` for revise and delete, `after` for add and revise. */
export interface LiveChange {
  at: Date;
  kind: LiveChangeKind;
  id: string;
  before?: EarthquakeEvent;
  after?: EarthquakeEvent;
}

export function checkLiveWindow(window: LiveWindow): WindowMs {
  const fromMs = window.from instanceof Date ? window.from.getTime() : Number.NaN;
  const toMs = window.to instanceof Date ? window.to.getTime() : Number.NaN;
  if (!(Number.isFinite(fromMs) && Number.isFinite(toMs)))
    throw new RangeError('live window: from and to must be valid Dates');
  if (fromMs > toMs) throw new RangeError('live window: from must not be after to');
  return { fromMs, toMs };
}

function checkCount(kind: string, n: number | undefined): number {
  const count = n ?? 0;
  if (!(Number.isInteger(count) && count >= 0))
    throw new RangeError(`live ${kind} count must be a whole number >= 0, got ${n}`);
  return count;
}

/**
 * The earthquake catalog as it is now: file and swarm events (the source) with the live changes
 * laid over them by id, so that replacing swarms keeps the changes. Every change builds a new
 * immutable CatalogIndex and swaps it in whole through `publish`: a query holds one index from
 * start to end and never sees half a tick.
 */
export class LiveCatalog {
  /** Every change since start, oldest first; the same array for the catalog's whole life. */
  readonly changes: LiveChange[] = [];
  private source: EarthquakeEvent[] = [];
  private sourceIds = new Set<string>();
  private sourceSpan: WindowMs | null = null;
  /** Revisions (an event) and deletions (null) of source events. */
  private readonly patched = new Map<string, EarthquakeEvent | null>();
  /** Live additions, revised in place; a deleted addition is simply dropped. */
  private readonly added = new Map<string, EarthquakeEvent>();
  private nextLiveId = 1;
  private readonly rng: Rng;
  private current: CatalogIndex;

  constructor(
    private readonly files: readonly EarthquakeEvent[],
    swarms: readonly SwarmSpec[],
    private readonly seed: number,
    private readonly tile: TileSpec | undefined,
    private readonly now: () => Date,
    private readonly publish: (index: CatalogIndex) => void = () => {},
  ) {
    this.rng = deriveRng(seed, 'live');
    this.current = this.load(swarms);
  }

  get index(): CatalogIndex {
    return this.current;
  }

  /** The untiled catalog as served now, oldest first (ties by id). */
  currentEvents(): EarthquakeEvent[] {
    return this.current.baseEvents();
  }

  setSwarms(swarms: readonly SwarmSpec[]): void {
    this.current = this.load(swarms);
    this.publish(this.current);
  }

  /** The default live window: the span of the file and swarm events. */
  sourceWindow(): WindowMs {
    if (this.sourceSpan === null) throw new RangeError('live: the catalog is empty, so a live window must be given');
    return this.sourceSpan;
  }

  /** Refuses tiling: a tile copy of a revised event would have to change in every tile at once. */
  assertUntiled(): void {
    if (this.tile) throw new RangeError('live catalog changes cannot be combined with tile; serve the catalog untiled');
  }

  /**
   * Revises and deletes distinct seeded picks among the events inside `window` (fewer when fewer
   * are there), then adds events `live-<n>` inside it; returns the changes in that order.
   */
  mutate(counts: LiveCounts, window?: LiveWindow): LiveChange[] {
    this.assertUntiled();
    const add = checkCount('add', counts.add);
    const revise = checkCount('revise', counts.revise);
    const remove = checkCount('delete', counts.delete);
    const w = window ? checkLiveWindow(window) : this.sourceWindow();
    if (add + revise + remove === 0) return [];
    const at = this.now();
    const inWindow = this.current.baseEventsBetween(w.fromMs, w.toMs);
    const picks = sampleInRandomOrder(inWindow, revise + remove, this.rng);
    const made: LiveChange[] = [];
    const put: EarthquakeEvent[] = [];
    picks.slice(0, revise).forEach((before) => {
      const after = revisedEvent(before, this.rng, w);
      this.remember(after);
      put.push(after);
      made.push({ at, kind: 'revise', id: before.id, before, after });
    });
    picks.slice(revise).forEach((before) => {
      if (!this.added.delete(before.id)) this.patched.set(before.id, null);
      made.push({ at, kind: 'delete', id: before.id, before });
    });
    for (let i = 0; i < add; i++) {
      const after = addedEvent(this.freshId(), this.rng, w);
      this.added.set(after.id, after);
      put.push(after);
      made.push({ at, kind: 'add', id: after.id, after });
    }
    this.current = this.current.withChanges(new Set(picks.map((e) => e.id)), put);
    this.publish(this.current);
    // A loop, not push(...made): a big tick would overflow the argument limit.
    for (const change of made) this.changes.push(change);
    return made;
  }

  private remember(event: EarthquakeEvent): void {
    if (this.added.has(event.id)) this.added.set(event.id, event);
    else this.patched.set(event.id, event);
  }

  private freshId(): string {
    let id = liveEventId(this.nextLiveId++);
    // A hand-made catalog may already use the name; live ids must never collide.
    while (this.sourceIds.has(id)) id = liveEventId(this.nextLiveId++);
    return id;
  }

  private load(swarms: readonly SwarmSpec[]): CatalogIndex {
    this.source = sourceEvents(this.files, swarms, this.seed);
    this.sourceIds = new Set(this.source.map((e) => e.id));
    this.sourceSpan = spanOf(this.source);
    return this.build();
  }

  private build(): CatalogIndex {
    if (this.patched.size === 0 && this.added.size === 0) return new CatalogIndex(this.source, this.tile);
    const events: EarthquakeEvent[] = [];
    for (const e of this.source) {
      const patch = this.patched.get(e.id);
      if (patch === undefined) events.push(e);
      else if (patch !== null) events.push(patch);
    }
    for (const e of this.added.values()) events.push(e);
    return new CatalogIndex(events, this.tile);
  }
}

function spanOf(events: readonly EarthquakeEvent[]): WindowMs | null {
  if (events.length === 0) return null;
  let fromMs = Infinity;
  let toMs = -Infinity;
  for (const e of events) {
    const t = Date.parse(e.time);
    fromMs = Math.min(fromMs, t);
    toMs = Math.max(toMs, t);
  }
  return { fromMs, toMs };
}
