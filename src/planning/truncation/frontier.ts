/**
 * The persisted state of one earthquake window while it is read, and the geometry every task
 * shares. Saved with each answer (ingest_partitions.frontier) in the same transaction, so a job
 * stopped after any call resumes without repeating a paid call.
 *
 * Times: a region is an OPEN interval (lo, hi) of true event times whose ends are whole seconds,
 * queried as start_time=lo, end_time=hi. Whatever the gateway does within the spec (either end
 * exclusive, fractional seconds ignored) it returns every event strictly inside. Reported times
 * may be coarser than the times the gateway filters on, so an event reported at r is only known
 * to lie in (r - PRECISION_MS, r + PRECISION_MS).
 */
import { z } from 'zod';
import { circleSchema } from '../../domain/filters.js';
import type { Interval } from '../../domain/interval.js';
import { LIMITS } from '../../domain/spec.js';
import { DAY_MS, SECOND_MS, secondAfter, secondBefore } from '../../domain/time.js';

export const PRECISION_MS = SECOND_MS;

export const seenEventSchema = z.strictObject({ id: z.string(), timeMs: z.number() });
export type SeenEvent = z.infer<typeof seenEventSchema>;

export const regionSchema = z.strictObject({ lo: z.number().int(), hi: z.number().int() });
export type Region = z.infer<typeof regionSchema>;

/** Which end a truncating gateway is guessed to keep. A guess only places queries; it proves nothing. */
export const directionSchema = z.enum(['newest', 'oldest']);
export type Direction = z.infer<typeof directionSchema>;

/** Events counted exactly (answers below the cap), older counts faded: events per ms is events / ms. */
export const rateSchema = z.strictObject({ events: z.number().nonnegative(), ms: z.number().positive() });
export type Rate = z.infer<typeof rateSchema>;

/**
 * Where events are, for placing the next query: times of events known to exist, each standing for
 * `perPoint` events. `exact`: the points are a full answer read under the walk's order guess (every
 * event past its last point is among them). `stored`: events stored by an earlier read. `estimate`:
 * any other full answer, a subset of unknown bias. `ids` (of answers, not of stored events) count
 * the events two answers in a row share.
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

export const taskSchema = z.discriminatedUnion('kind', [
  /**
   * Cover `region` from its anchored end (the top for `down`, the bottom for `up`) by chunks
   * sized to come back below the cap: the chunk reaches from the anchor to `reach` (the whole
   * region when null). A chunk that comes back full is asked again smaller.
   */
  z.strictObject({
    kind: z.literal('walk'),
    dir: z.enum(['down', 'up']),
    region: regionSchema,
    reach: z.number().int().nullable(),
    /** The chunk was placed from an `exact` sample: its outcome tests the order guess. */
    guessed: z.boolean(),
    rate: rateSchema.nullable(),
    sample: sampleSchema.nullable(),
    /** Full answers in a row for this chunk: each shrinks it at least geometrically. */
    misses: z.number().int().nonnegative(),
  }),
  /** A crowded stretch cut by place: one circle of a cover of the sphere, asked whole. */
  z.strictObject({ kind: z.literal('scan'), region: regionSchema, circle: circleTaskSchema }),
]);
export type Task = z.infer<typeof taskSchema>;
export type WalkTask = Extract<Task, { kind: 'walk' }>;
export type TaskKind = Task['kind'];

const orderPreferenceSchema = z.enum(['newest', 'oldest', 'walk']);
export type OrderPreference = z.infer<typeof orderPreferenceSchema>;

const tallySchema = z.strictObject({ newest: z.number().int(), oldest: z.number().int() });

export const frontierSchema = z.strictObject({
  /** Shape version: a frontier of another shape is not resumed (the window is read afresh). */
  version: z.literal(2),
  window: z.strictObject({ startMs: z.number(), endMs: z.number() }),
  /** The gateway's cap as learned (the largest answer seen): an answer smaller than it is complete. */
  capFloor: z.number().int().min(1),
  /** The order guess other windows suggest; this window's own outcomes can overrule it. */
  prefer: orderPreferenceSchema,
  /** The stream has no circle of its own, so a crowded second may be cut by circles covering the sphere. */
  circleCuts: z.boolean(),
  /** Chunks placed under an order guess that came back below the cap (confirmed) or full (refuted). */
  refuted: tallySchema,
  confirmed: tallySchema,
  tasks: z.array(taskSchema),
  /** Regions no query could resolve (more than a cap of events within two seconds). */
  unresolved: z.array(regionSchema),
  /** Crowded regions handed to circle cuts (or given up): walks never ask them again. */
  placed: z.array(regionSchema),
  /** When this read began (epoch ms): events no answer returned since are deletion candidates. */
  startedAtMs: z.number().int(),
  /** What this read covers: the window, or (a partial window read again) the intervals left unresolved. */
  scope: z.array(regionSchema),
  calls: z.number().int(),
  /** Calls cut by circles: bounded by the cut depth, so not held against the call ceiling. */
  circleCalls: z.number().int(),
  /** Events proven (counted in answers below the cap), and the time those answers covered. */
  eventsSeen: z.number().int(),
  provenMs: z.number().nonnegative(),
});
export type Frontier = z.infer<typeof frontierSchema>;

export interface Answer {
  events: SeenEvent[];
}

/** The window's region: every instant of [startMs, endMs], boundaries widened to whole seconds. */
export function windowRegion(window: Interval): Region {
  return { lo: secondBefore(window.startMs), hi: secondAfter(window.endMs) };
}

/** The longest query the gateway accepts. */
export const MAX_QUERY_MS = LIMITS.maxWindowDays * DAY_MS;

/**
 * The window's region in pieces the gateway accepts: one for a window planned by the current rules
 * (31 days less 2 s), more for a longer one (a job queued by a version that planned whole 31 days,
 * whose widened ends would exceed the limit), neighbours overlapping by a second.
 */
export function queryableRegions(window: Interval): Region[] {
  const out: Region[] = [];
  let rest = windowRegion(window);
  while (rest.hi - rest.lo > MAX_QUERY_MS) {
    const [head, tail] = splitAt(rest, rest.lo + MAX_QUERY_MS);
    out.push(head);
    rest = tail;
  }
  return [...out, rest];
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

export function possiblyIn(e: SeenEvent, r: Region): boolean {
  return e.timeMs + PRECISION_MS > r.lo && e.timeMs - PRECISION_MS < r.hi;
}

/** Union by id, first occurrence wins. */
export function mergeEvents(...lists: (readonly SeenEvent[])[]): SeenEvent[] {
  const byId = new Map<string, SeenEvent>();
  for (const list of lists) for (const e of list) if (!byId.has(e.id)) byId.set(e.id, e);
  return [...byId.values()];
}
