/**
 * The wire shapes of spec parts 2 and 4: request bodies (refused before sending when they break
 * the spec) and answers (validated before anything is written). Field rules come from domain/.
 */
import * as z from 'zod';
import {
  circleFromParts,
  countryCodeSchema,
  indicatorCodeSchema,
  latitudeSchema,
  longitudeSchema,
  magnitudeSchema,
  radiusKmSchema,
} from '../domain/filters.js';
import { EARTHQUAKE_PROVIDER, INDICATOR_PROVIDER, LIMITS, yearSpan } from '../domain/spec.js';
import { storableKey } from '../domain/text.js';
import { canonicalTime, DAY_MS, isRfc3339, parseRfc3339, reportedPrecisionMs } from '../domain/time.js';

const rfc3339 = z.string().refine(isRfc3339, 'must be an RFC 3339 timestamp');

// ---------------------------------------------------------------- requests

/** Spec 4.1 + 8. `now` is a parameter because "not in the future" depends on it. */
export function earthquakeRequestSchema(now: () => Date = () => new Date()) {
  return z
    .strictObject({
      provider: z.literal(EARTHQUAKE_PROVIDER),
      start_time: rfc3339,
      end_time: rfc3339,
      min_magnitude: magnitudeSchema.optional(),
      latitude: latitudeSchema.optional(),
      longitude: longitudeSchema.optional(),
      radius_km: radiusKmSchema.optional(),
      max_results: z.number().int().min(1).max(LIMITS.maxResultsCeiling).optional(),
    })
    .superRefine((req, ctx) => {
      const start = parseRfc3339(req.start_time);
      const end = parseRfc3339(req.end_time);
      // A malformed timestamp already has its own issue; comparing it would only add noise.
      if (start === null || end === null) return;
      if (start > now().getTime()) {
        ctx.addIssue({ code: 'custom', path: ['start_time'], message: 'must not be in the future' });
      }
      if (!(end > start)) {
        ctx.addIssue({ code: 'custom', path: ['end_time'], message: 'must be after start_time' });
      } else if (end - start > LIMITS.maxWindowDays * DAY_MS) {
        ctx.addIssue({
          code: 'custom',
          path: ['end_time'],
          message: `must be at most ${LIMITS.maxWindowDays} days after start_time`,
        });
      }
      if (
        circleFromParts({ latitude: req.latitude, longitude: req.longitude, radiusKm: req.radius_km }) === 'partial'
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['radius_km'],
          message: 'latitude, longitude and radius_km must be set together or all be absent',
        });
      }
    });
}
export type EarthquakeRequest = z.infer<ReturnType<typeof earthquakeRequestSchema>>;

export function indicatorRequestSchema(now: () => Date = () => new Date()) {
  return z
    .strictObject({
      provider: z.literal(INDICATOR_PROVIDER),
      country: countryCodeSchema,
      indicator: indicatorCodeSchema,
      start_year: z.number().int().min(LIMITS.firstYear).optional(),
      end_year: z.number().int().optional(),
    })
    .superRefine((req, ctx) => {
      const currentYear = now().getUTCFullYear();
      const endYear = req.end_year ?? currentYear;
      const startYear = req.start_year ?? endYear - 9;
      if (endYear < LIMITS.firstYear) {
        ctx.addIssue({ code: 'custom', path: ['end_year'], message: `must be ${LIMITS.firstYear} or later` });
      }
      if (endYear > currentYear) {
        ctx.addIssue({ code: 'custom', path: ['end_year'], message: `must not be after ${currentYear}` });
      }
      if (endYear < startYear) {
        ctx.addIssue({ code: 'custom', path: ['end_year'], message: 'must not be before start_year' });
      } else if (yearSpan(startYear, endYear) > LIMITS.maxYearSpan) {
        ctx.addIssue({
          code: 'custom',
          path: ['end_year'],
          message: `span from start_year to end_year must be at most ${LIMITS.maxYearSpan} years`,
        });
      }
    });
}
export type IndicatorRequest = z.infer<ReturnType<typeof indicatorRequestSchema>>;

// --------------------------------------------------------------- responses

const sourceSchema = z.object({ name: z.string(), license: z.string(), url: z.string() });

export const earthquakeEventSchema = z.object({
  id: z.string().min(1),
  // RFC 3339 as the spec says (lower-case `t` and `z` included, any fraction, any offset, a leap
  // second), not zod's ISO subset; passed on in the one form every later step reads alike.
  time: z.string().refine(isRfc3339, 'must be an RFC 3339 date-time').transform(canonicalTime),
  magnitude: z.number().nullable(),
  magnitude_type: z.string().nullable(),
  place: z.string().nullable(),
  latitude: z.number(),
  longitude: z.number(),
  depth_km: z.number().nullable(),
  tsunami_flag: z.boolean(),
  url: z.string().nullable(),
});

/** An event as read: `full_id` holds an id too long for an index, which `id` then names by its digest. */
export type EarthquakeEvent = z.infer<typeof earthquakeEventSchema> & { full_id?: string };

/**
 * An id too long for an index is keyed by its digest from here on, so that every later step (the
 * upsert, revisions, deletion checks, the planner's samples) names the event alike; the id as sent
 * goes along as `full_id` and is stored beside the key. One pass over the answer, not a transform
 * per event: zod's per-element transforms cost a third more than the whole parse.
 */
function keyedEvents(events: EarthquakeEvent[] | null): EarthquakeEvent[] | null {
  if (events === null || events.every((e) => storableKey(e.id) === e.id)) return events;
  return events.map((e) => {
    const key = storableKey(e.id);
    return key === e.id ? e : { ...e, id: key, full_id: e.id };
  });
}

export const earthquakeResultSchema = z.object({
  events: z.array(earthquakeEventSchema).nullable().transform(keyedEvents),
  source: sourceSchema,
});
export type EarthquakeResult = z.infer<typeof earthquakeResultSchema>;

/**
 * An earthquake answer that matched nothing, however the gateway writes one: the spec shows no
 * body for an empty match (`readAnswer` reads one only where the execution says no event was
 * returned). Its source is blank: nothing reads or stores a source.
 */
export const EMPTY_EARTHQUAKE_MATCH = {
  list: 'events',
  result: { events: [], source: { name: '', license: '', url: '' } } satisfies EarthquakeResult,
};

/**
 * The result schema for one request. An answer breaks the spec when it holds more events than
 * `max_results` asked (accepted, it would teach the planner a cap above the one asked for, and every
 * full answer after it would pass for complete), or an event further outside `start_time`..`end_time`
 * than the precision its time is reported in (`reportedPrecisionMs`: a second, or the coarsest unit up
 * to a day of which it is a whole multiple): the planner would take it as evidence about a part of
 * the window the query never asked.
 */
export function earthquakeResultFor(req: Pick<EarthquakeRequest, 'start_time' | 'end_time' | 'max_results'>) {
  const maxResults = req.max_results ?? LIMITS.defaultMaxResults;
  const startMs = parseRfc3339(req.start_time) ?? NaN;
  const endMs = parseRfc3339(req.end_time) ?? NaN;
  // Piped after the shared schema, not refined onto it: a refined copy would be a new schema per
  // call, compiled again by zod on its first parse (a tenth of a millisecond per call).
  return earthquakeResultSchema.pipe(
    z.custom<EarthquakeResult>().superRefine((r, ctx) => {
      const events = r.events ?? [];
      if (events.length > maxResults) {
        ctx.addIssue({
          code: 'custom',
          path: ['events'],
          message: `holds ${events.length} events, more than the max_results of ${maxResults} asked for`,
        });
      }
      // Each time by its own precision: a gateway may report some sources' times coarser than others'.
      const outside = events.findIndex((e) => {
        const ms = Date.parse(e.time);
        const slackMs = reportedPrecisionMs([ms]);
        return ms < startMs - slackMs || ms > endMs + slackMs;
      });
      if (outside >= 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['events', outside, 'time'],
          message: `${events[outside]!.time} is outside the ${req.start_time}..${req.end_time} asked for`,
        });
      }
    }),
  );
}

/** An indicator's or country's id and name; an id too long for an index is keyed as an event id is. */
const namedSchema = z.object({ id: z.string(), name: z.string() }).transform((n): typeof n & { full_id?: string } => {
  const key = storableKey(n.id);
  return key === n.id ? n : { ...n, id: key, full_id: n.id };
});

export const indicatorResultSchema = z.object({
  indicator: namedSchema,
  country: namedSchema,
  values: z.array(z.object({ year: z.number().int(), value: z.number().nullable() })).nullable(),
  last_updated: z.string().nullable(),
  source: sourceSchema,
});
export type IndicatorResult = z.infer<typeof indicatorResultSchema>;

/**
 * Spec 2.2: the types of the execution's fields are not shown, so an id is read as text whatever
 * it is (a number, an object), and one that is null or absent as none.
 */
const idLike = z
  .unknown()
  .optional()
  .transform((v) => (v === null || v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v)));

/** Units in a form that states a number, else unknown: no type of theirs is shown either. */
const unitsLike = z
  .union([z.number(), z.string().regex(/^-?\d+(\.\d+)?$/)])
  .transform(Number)
  .optional()
  .catch(undefined);

/**
 * Lenient on purpose: the gateway bills whatever it calls `succeeded`, so the audit must be able
 * to read `outcome` and `units` even from an answer whose result breaks the spec; and of the
 * execution only `outcome` decides anything, so no other field of it can refuse an answer.
 */
export const executionSchema = z.object({
  id: idLike,
  invocation_id: idLike,
  outcome: z.string(),
  usage: z.object({ units: unitsLike }).partial().nullish().catch(undefined),
  timing: z.unknown().optional(),
});
export type Execution = z.infer<typeof executionSchema>;

export function envelopeSchema<R extends z.ZodType>(result: R) {
  return z.object({
    code: z.number().int(),
    data: z.object({ execution: executionSchema, result }),
    // Optional: a null stands for none, as JSON writers often write an absent field.
    message: z.string().nullish(),
  });
}
