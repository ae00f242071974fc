/**
 * A frontier as read back from the database: the current shape, or the shape version 0.3.0 saved
 * (version 2), converted, so that a window a previous release was reading when it was upgraded
 * resumes where it stopped instead of paying for its answers again. Anything else (an older shape)
 * does not parse, and the window is read afresh.
 */
import * as z from 'zod';
import { probeRegionsOf } from './knowledge.js';
import {
  FRONTIER_VERSION,
  frontierSchema,
  rateSchema,
  regionSchema,
  sampleSchema,
  tallySchema,
  type Frontier,
  type Task,
} from './frontier.js';
import { circleSchema } from '../../domain/filters.js';

const v2TaskSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('walk'),
    dir: z.enum(['down', 'up']),
    region: regionSchema,
    reach: z.number().int().nullable(),
    guessed: z.boolean(),
    rate: rateSchema.nullable(),
    sample: sampleSchema.nullable(),
    misses: z.number().int().nonnegative(),
  }),
  z.strictObject({
    kind: z.literal('scan'),
    region: regionSchema,
    circle: circleSchema.extend({ depth: z.number().int() }),
  }),
]);

/** Version 2: one cap floor, `dir` down/up, `misses`, `eventsSeen`, and the preference `walk` for none. */
const v2Schema = z.strictObject({
  version: z.literal(2),
  window: z.strictObject({ startMs: z.number(), endMs: z.number() }),
  capFloor: z.number().int().min(1),
  prefer: z.enum(['newest', 'oldest', 'walk']),
  circleCuts: z.boolean(),
  refuted: tallySchema,
  confirmed: tallySchema,
  tasks: z.array(v2TaskSchema),
  unresolved: z.array(regionSchema),
  placed: z.array(regionSchema),
  startedAtMs: z.number().int(),
  scope: z.array(regionSchema),
  calls: z.number().int(),
  circleCalls: z.number().int(),
  eventsSeen: z.number().int(),
  provenMs: z.number().nonnegative(),
});

function taskOf(t: z.infer<typeof v2TaskSchema>): Task {
  if (t.kind === 'scan') return { ...t, held: null };
  const { dir, misses, ...rest } = t;
  const stored = t.sample?.trust === 'stored' ? t.sample : null;
  return { ...rest, from: dir === 'down' ? 'newest' : 'oldest', fullAnswers: misses, stored, held: null };
}

/** The cap a version 2 frontier held is as old as its read: taken as lapsed, so a resumed read learns it again. */
function fromV2(v: z.infer<typeof v2Schema>): Frontier {
  return {
    version: FRONTIER_VERSION,
    window: v.window,
    cap: {
      floor: v.capFloor,
      measured: null,
      hint: null,
      probes: [],
      probeRegions: probeRegionsOf(v.window, null, 0),
      seenAtMs: 0,
      unfiltered: false,
    },
    prefer: v.prefer === 'walk' ? 'none' : v.prefer,
    hintBacked: false,
    circleCuts: v.circleCuts,
    refuted: v.refuted,
    confirmed: v.confirmed,
    nearby: null,
    tasks: v.tasks.map(taskOf),
    unresolved: v.unresolved,
    placed: v.placed,
    startedAtMs: v.startedAtMs,
    scope: v.scope,
    calls: v.calls,
    circleCalls: v.circleCalls,
    callsBeforeRun: v.calls - v.circleCalls,
    eventsProven: v.eventsSeen,
    provenMs: v.provenMs,
    answers: { full: 0, proofs: 0, largest: 0, recent: [] },
    recount: { stored: 0, added: 0 },
    learnedShare: null,
  };
}

export const savedFrontierSchema = z.union([frontierSchema, v2Schema.transform(fromV2)]);
