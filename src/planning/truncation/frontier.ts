/**
 * The persisted state of one earthquake window while it is read, and the geometry every task
 * shares. Saved with each answer (ingest_partitions.frontier) in the same transaction, so a job
 * stopped after any call resumes without repeating a paid call.
 *
 * Times: a region is an OPEN interval (lo, hi) of true event times whose ends are whole seconds,
 * queried as start_time=lo, end_time=hi. Whatever the gateway does within the spec (either end
 * exclusive, fractional seconds ignored) it returns every event strictly inside. Reported times
 * may be coarser than the times the gateway filters on (units.ts): they place queries, and no
 * proof rests on them.
 */
import * as z from 'zod';
import { circleSchema } from '../../domain/filters.js';
import type { Interval } from '../../domain/interval.js';
import { LIMITS } from '../../domain/spec.js';
import { DAY_MS, SECOND_MS, secondAfter, secondBefore } from '../../domain/time.js';
import { capSchema } from './cap.js';

export const seenEventSchema = z.strictObject({ id: z.string(), timeMs: z.number() });
export type SeenEvent = z.infer<typeof seenEventSchema>;

export const regionSchema = z.strictObject({ lo: z.number().int(), hi: z.number().int() });
export type Region = z.infer<typeof regionSchema>;

/**
 * An end of the time axis: which events a truncating gateway is guessed to keep (the newest or the
 * oldest), and the end a walk starts from. A guess only places queries; it proves nothing.
 */
export const orderSchema = z.enum(['newest', 'oldest']);
export type Order = z.infer<typeof orderSchema>;

/** Events counted exactly (answers below the cap), older counts faded: events per ms is events / ms. */
export const rateSchema = z.strictObject({ events: z.number().nonnegative(), ms: z.number().positive() });
export type Rate = z.infer<typeof rateSchema>;

/**
 * Where events are, for placing the next query: times of events known to exist, each standing for
 * `perPoint` events. `exact`: the points are a full answer read under the walk's order guess (every
 * event past its last point is among them). `stored`: events stored by an earlier read, in a stretch
 * proven complete. `estimate`: any other full answer, a subset of unknown bias. `ids` (of answers,
 * not of stored events) count the events two answers in a row share.
 */
export const sampleSchema = z.strictObject({
  trust: z.enum(['exact', 'stored', 'estimate']),
  points: z.array(z.number()),
  ids: z.array(z.string()),
  perPoint: z.number().positive(),
});
export type Sample = z.infer<typeof sampleSchema>;

const circleTaskSchema = circleSchema.extend({ depth: z.number().int() });
export type CircleCut = z.infer<typeof circleTaskSchema>;

/**
 * An answer kept on its task until the cap probe says whether it proves its query: it was as large
 * as the cap floor, below max_results, and no probe had measured the cap that far.
 */
export const heldSchema = z.strictObject({ events: z.array(seenEventSchema) }).nullable();

export const taskSchema = z.discriminatedUnion('kind', [
  /**
   * Cover `region` from the end `from` by chunks sized to come back below the cap: the chunk
   * reaches from that end to `reach` (the whole region when null). A chunk that comes back full is
   * asked again smaller.
   */
  z.strictObject({
    kind: z.literal('walk'),
    from: orderSchema,
    region: regionSchema,
    reach: z.number().int().nullable(),
    /** The chunk was placed from an `exact` sample: its outcome tests the order guess. */
    guessed: z.boolean(),
    /** This walk's own exact counts; null until one of its chunks is proven. */
    rate: rateSchema.nullable(),
    /** What places the next chunk: the stored events, or a full answer's events for the chunk asked again. */
    sample: sampleSchema.nullable(),
    /** Events stored for the walk's region by an earlier read (proven complete there): kept for every chunk. */
    stored: sampleSchema.nullable(),
    /** Full answers in a row for this chunk: each shrinks it at least geometrically. */
    fullAnswers: z.number().int().nonnegative(),
    held: heldSchema,
    /**
     * Where the rest of the region is cut once this chunk is proven, each part then asked whole: the
     * thirds of a first answer whose events reach neither end, asked one at a time (first-answer.ts
     * `outerPartFirst`); empty for the walk an outer part's answer turned, whose rest is cut where the
     * events it knows end (`knownAndPast`). Absent for every other walk.
     */
    restCuts: z.array(z.number().int()).optional(),
    /**
     * Past this time, on the side away from the walk's end, the region's whole first answer held no
     * event, and a chunk placed under an order guess then showed the gateway keeps neither end: its
     * answers are a subset spread over the events, so that stretch holds few, and sizing counts no
     * rate there. Absent for every other walk.
     */
    quietPast: z.number().int().optional(),
  }),
  /** A crowded stretch cut by place: one circle of a cover of the sphere, asked whole. */
  z.strictObject({ kind: z.literal('scan'), region: regionSchema, circle: circleTaskSchema, held: heldSchema }),
  /** The cap probe: an unfiltered query that settles whether the held answers are proofs. */
  z.strictObject({ kind: z.literal('probe'), region: regionSchema }),
]);
export type Task = z.infer<typeof taskSchema>;
export type WalkTask = Extract<Task, { kind: 'walk' }>;
export type ScanTask = Extract<Task, { kind: 'scan' }>;
export type TaskKind = Task['kind'];

/** Which order to guess first: a hint from other windows, never evidence. `none`: guess only what this window confirms. */
export const orderPreferenceSchema = z.enum(['newest', 'oldest', 'none']);
export type OrderPreference = z.infer<typeof orderPreferenceSchema>;

export const tallySchema = z.strictObject({ newest: z.number().int(), oldest: z.number().int() });

/** What the window's answers looked like, for the reason a read gives up. */
export const answersSeenSchema = z.strictObject({
  full: z.number().int(),
  proofs: z.number().int(),
  largest: z.number().int(),
  /** Sizes of the last few answers, newest last. */
  recent: z.array(z.number().int()),
});
export type AnswersSeen = z.infer<typeof answersSeenSchema>;

/**
 * Stored events this read's proofs counted again (`stored`), and how many more their answers held
 * (`added`, less where events were deleted): how much the catalog changed since it was stored.
 */
export const recountSchema = z.strictObject({ stored: z.number().nonnegative(), added: z.number() });
export type Recount = z.infer<typeof recountSchema>;

export const FRONTIER_VERSION = 3;

export const frontierSchema = z.strictObject({
  /** Shape version: an older shape is converted (frontier-upgrade.ts); an unknown one is read afresh. */
  version: z.literal(FRONTIER_VERSION),
  window: z.strictObject({ startMs: z.number(), endMs: z.number() }),
  cap: capSchema,
  /** The order guess other windows suggest; this window's own outcomes can overrule it. */
  prefer: orderPreferenceSchema,
  /** Other windows saw the hinted order hold (rather than nothing at all). */
  hintBacked: z.boolean(),
  /** The stream has no circle of its own, so a crowded second may be cut by circles covering the sphere. */
  circleCuts: z.boolean(),
  /** Chunks placed under an order guess that came back below the cap (confirmed) or full (refuted). */
  refuted: tallySchema,
  confirmed: tallySchema,
  /** Events per ms of proven stretches near the window: sizes a chunk only after a full answer of this window. */
  nearby: rateSchema.nullable(),
  tasks: z.array(taskSchema),
  /** Regions no query could resolve (more than a cap of events within two seconds). */
  unresolved: z.array(regionSchema),
  /** Crowded regions handed to circle cuts (or given up): walks never ask them again. */
  placed: z.array(regionSchema),
  /** When this read began (epoch ms): events no answer returned since are deletion candidates. */
  startedAtMs: z.number().int(),
  /** What this read covers: the window less what other reads proved (a first read), or what a partial read left. */
  scope: z.array(regionSchema),
  calls: z.number().int(),
  /** Calls cut by circles: bounded by the cut depth, so not held against the call ceiling. */
  circleCalls: z.number().int(),
  /** Calls (less circle calls) made before this run of the read began: each run has a ceiling of its own. */
  callsBeforeRun: z.number().int(),
  /** Events proven (counted in answers below the cap), and the time those answers covered. */
  eventsProven: z.number().int(),
  provenMs: z.number().nonnegative(),
  answers: answersSeenSchema,
  /** Absent in frontiers saved before it was kept: nothing counted again yet. */
  recount: recountSchema.default({ stored: 0, added: 0 }),
  /** The share of new events earlier reads of the gateway counted again, the prior of this read's fit; null when none is known. */
  learnedShare: z.number().min(0).max(1).nullable().default(null),
});
export type Frontier = z.infer<typeof frontierSchema>;

export interface Answer {
  events: SeenEvent[];
}

/** The window's region: every instant of [startMs, endMs], boundaries widened to whole seconds. */
export function windowRegion(window: Interval): Region {
  return { lo: secondBefore(window.startMs), hi: secondAfter(window.endMs) };
}

/** Every instant of the closed interval [lo, hi], widened to whole seconds strictly outside. */
export function regionAround(lo: number, hi: number): Region {
  return { lo: secondBefore(lo), hi: secondAfter(hi) };
}

/** The longest query the gateway accepts. */
export const MAX_QUERY_MS = LIMITS.maxWindowDays * DAY_MS;

/**
 * A region in pieces the gateway accepts: one for a window planned by the current rules (31 days
 * less 2 s), more for a longer one (a job queued by a version that planned whole 31 days, whose
 * widened ends would exceed the limit), neighbours overlapping by a second.
 */
export function queryablePieces(region: Region): Region[] {
  const out: Region[] = [];
  let rest = region;
  while (rest.hi - rest.lo > MAX_QUERY_MS) {
    const [head, tail] = splitAt(rest, rest.lo + MAX_QUERY_MS);
    out.push(head);
    rest = tail;
  }
  return [...out, rest];
}

export function queryableRegions(window: Interval): Region[] {
  return queryablePieces(windowRegion(window));
}

export function regionInterval(r: Region): Interval {
  return { startMs: r.lo, endMs: r.hi };
}

/** Regions of at least this span can be cut into two strictly smaller ones (see `splitAt`). */
export function canSplit(r: Region): boolean {
  return r.hi - r.lo >= 3 * SECOND_MS;
}

/** Two open regions cut at whole second `at` overlap by a second, so no instant falls between them. */
export function splitAt(r: Region, at: number): [Region, Region] {
  return [
    { lo: r.lo, hi: at },
    { lo: at - SECOND_MS, hi: r.hi },
  ];
}

/** A whole-second cut near `at` that leaves both halves strictly smaller, or null when none does. */
export function clampCut(r: Region, at: number): number | null {
  if (!canSplit(r)) return null;
  return Math.min(Math.max(Math.round(at / SECOND_MS) * SECOND_MS, r.lo + 2 * SECOND_MS), r.hi - SECOND_MS);
}

/** `r` cut at whole seconds near `cuts` (ascending), neighbours overlapping by a second, lowest first. */
export function cutAt(r: Region, cuts: readonly number[]): Region[] {
  const out: Region[] = [];
  let rest = r;
  for (const c of cuts) {
    const at = clampCut(rest, c);
    if (at === null || at <= rest.lo + SECOND_MS) continue;
    const [head, tail] = splitAt(rest, at);
    out.push(head);
    rest = tail;
  }
  out.push(rest);
  return out;
}

/** Union by id, first occurrence wins. */
export function mergeEvents(...lists: (readonly SeenEvent[])[]): SeenEvent[] {
  const byId = new Map<string, SeenEvent>();
  for (const list of lists) for (const e of list) if (!byId.has(e.id)) byId.set(e.id, e);
  return [...byId.values()];
}

export function regionText(r: Region): string {
  return `${new Date(r.lo).toISOString()}..${new Date(r.hi).toISOString()}`;
}
