/**
 * The persisted state of one earthquake window while its truncated answers are followed up, and
 * the geometry every task shares. Saved with each answer (ingest_partitions.frontier) in the
 * same transaction, so a job stopped after any call resumes without repeating a paid call.
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
import { SECOND_MS, secondAfter, secondBefore } from '../../domain/time.js';

export const PRECISION_MS = SECOND_MS;
/** The chance, per window, that it is marked complete while an event is missing: below one in a million. */
export const WRONG_COMPLETION_BUDGET = 1e-6;
/** A gateway that truncates one way on most calls is still worth chaining; one that never does is not. */
export const MAX_REFUTATIONS = 2;

export const seenEventSchema = z.strictObject({ id: z.string(), timeMs: z.number() });
export type SeenEvent = z.infer<typeof seenEventSchema>;

export const regionSchema = z.strictObject({ lo: z.number().int(), hi: z.number().int() });
export type Region = z.infer<typeof regionSchema>;

export const directionSchema = z.enum(['newest', 'oldest']);
export type Direction = z.infer<typeof directionSchema>;

/**
 * What a saturated answer claims under a chain hypothesis (it holds every event of its query past
 * its own last event), and the evidence gathered for it: `checked` events of the answer that the
 * next answer confirmed with nothing between them, and `known` distinct events seen in the query.
 */
export const claimSchema = z.strictObject({
  id: z.number().int(),
  /** Claims of one chain share it; only later steps of the same chain add to `known`. */
  chain: z.number().int(),
  dir: directionSchema,
  /** The part of the query the claim alone vouches for. */
  region: regionSchema,
  query: regionSchema,
  /** The answer's size: the cap it hit. */
  size: z.number().int(),
  known: z.number().int(),
  /** Chain coordinates of the answer's last event, and how many events later steps found past it. */
  floor: z.number(),
  below: z.number().int(),
  checked: z.number().int(),
  /**
   * Chain coordinates of the overlap the next answer must confirm, and the claiming answer's own
   * events in it (dropped once checked: only the count is kept).
   */
  zone: z.strictObject({ from: z.number(), to: z.number(), ids: z.array(z.string()) }),
  status: z.enum(['open', 'checked', 'verifying']),
});
export type Claim = z.infer<typeof claimSchema>;

/** Events per sample point, and events per millisecond of the last chunks counted exactly (null before). */
const densitySchema = z.strictObject({ events: z.number(), points: z.number(), perMs: z.number().nullable() });
export type Density = z.infer<typeof densitySchema>;

const circleTaskSchema = circleSchema.extend({ depth: z.number().int() });
export type CircleCut = z.infer<typeof circleTaskSchema>;

/** `known`: events already seen that may lie in the task's region, so an answer's new events are counted once. */
export const taskSchema = z.discriminatedUnion('kind', [
  /** Ask for the whole region; what follows depends on whether the answer is saturated. */
  z.strictObject({ kind: z.literal('scan'), region: regionSchema, known: z.array(seenEventSchema), circle: circleTaskSchema.nullable() }),
  /** The next step of a chain: the region below (newest) or above (oldest) the previous answer. */
  z.strictObject({ kind: z.literal('chain'), dir: directionSchema, region: regionSchema, known: z.array(seenEventSchema), claim: z.number().int() }),
  /** No order hypothesis: cover the region with answers too small to be truncated. */
  z.strictObject({
    kind: z.literal('walk'),
    region: regionSchema,
    known: z.array(seenEventSchema),
    density: densitySchema,
    cut: z.number().int().nullable(),
  }),
  /** Re-read a claim's region whose evidence was too weak. */
  z.strictObject({ kind: z.literal('verify'), claim: z.number().int(), region: regionSchema, known: z.array(seenEventSchema) }),
]);
export type Task = z.infer<typeof taskSchema>;
export type TaskKind = Task['kind'];

const orderPreferenceSchema = z.enum(['newest', 'oldest', 'walk']);
export type OrderPreference = z.infer<typeof orderPreferenceSchema>;

export const frontierSchema = z.strictObject({
  window: z.strictObject({ startMs: z.number(), endMs: z.number() }),
  /** Proven lower bound on the gateway's real cap: an answer smaller than it is complete. */
  capFloor: z.number().int().min(1),
  prefer: orderPreferenceSchema,
  /** The stream has no circle of its own, so a crowded second may be cut by circles covering the sphere. */
  circleCuts: z.boolean(),
  /**
   * Chain steps of this window refuted and confirmed, per direction: a direction refuted
   * MAX_REFUTATIONS times is tried again only while it holds at least as often as it fails.
   */
  refuted: z.strictObject({ newest: z.number().int(), oldest: z.number().int() }),
  confirmed: z.strictObject({ newest: z.number().int(), oldest: z.number().int() }),
  nextClaim: z.number().int(),
  claims: z.array(claimSchema),
  tasks: z.array(taskSchema),
  /** Regions no query could resolve (more than a cap of events within two seconds). */
  unresolved: z.array(regionSchema),
  /** Crowded regions handed to circle cuts (or given up): other tasks never ask them again. */
  placed: z.array(regionSchema),
  /** Sum of the wrong-completion bounds of the claims accepted so far (at most WRONG_COMPLETION_BUDGET). */
  riskSpent: z.number(),
  /** When this read began (epoch ms): events no answer returned since are deletion candidates. */
  startedAtMs: z.number().int().default(0),
  /** What this read covers: the window, or (a partial window read again) the intervals left unresolved. */
  scope: z.array(regionSchema).default([]),
  calls: z.number().int(),
  /** Calls cut by circles: bounded by the cut depth, so not held against the call ceiling. */
  circleCalls: z.number().int(),
  eventsSeen: z.number().int(),
});
export type Frontier = z.infer<typeof frontierSchema>;

export interface Answer {
  events: SeenEvent[];
}

/** The window's region: every instant of [startMs, endMs], boundaries widened to whole seconds. */
export function windowRegion(window: Interval): Region {
  return { lo: secondBefore(window.startMs), hi: secondAfter(window.endMs) };
}

export function regionInterval(r: Region): Interval {
  return { startMs: r.lo, endMs: r.hi };
}

/** The reported time leaves no doubt that the event's true time is inside the region. */
export function surelyIn(e: SeenEvent, r: Region): boolean {
  return e.timeMs - PRECISION_MS >= r.lo && e.timeMs + PRECISION_MS <= r.hi;
}

export function possiblyIn(e: SeenEvent, r: Region): boolean {
  return e.timeMs + PRECISION_MS > r.lo && e.timeMs - PRECISION_MS < r.hi;
}

/** Two open regions cut at whole second `at` overlap by a second, so no instant falls between them. */
export function splitAt(r: Region, at: number): [Region, Region] {
  return [{ lo: r.lo, hi: at }, { lo: at - SECOND_MS, hi: r.hi }];
}

/** Cut points that leave both halves strictly smaller: at least two seconds above lo, one below hi. */
export function canSplit(r: Region): boolean {
  return r.hi - r.lo >= 3 * SECOND_MS;
}

export function clampCut(r: Region, at: number): number | null {
  const cut = Math.min(Math.max(Math.round(at / SECOND_MS) * SECOND_MS, r.lo + 2 * SECOND_MS), r.hi - SECOND_MS);
  return canSplit(r) ? cut : null;
}

export function knownIn(events: readonly SeenEvent[], r: Region): SeenEvent[] {
  return events.filter((e) => possiblyIn(e, r));
}

/** Union by id, first occurrence wins. */
export function mergeEvents(...lists: (readonly SeenEvent[])[]): SeenEvent[] {
  const byId = new Map<string, SeenEvent>();
  for (const list of lists) for (const e of list) if (!byId.has(e.id)) byId.set(e.id, e);
  return [...byId.values()];
}
