/**
 * The streams a jobs file declares: the whole-document schema, each kind's keys and resolved form,
 * and the rules that tie several keys together.
 *
 * The schemas hold field-by-field rules only. Cross-field rules (schedule xor every, refresh tiers, the
 * circle, to_year >= from_year, unique names and codes) run on the raw document instead, in
 * `crossFieldProblems`, so that one bad field never hides another problem of the same stream.
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
  yearSchema,
} from '../../domain/filters.js';
import { currentYearEverywhere, DAY_MS, INSTANT_FORMS, parseInstant } from '../../domain/time.js';
import { checkedString, fail, formatPath, has, isRecord, ok, type Check } from './messages.js';
import type { RawProblem, Report, Segment } from './messages.js';
import { refreshRules, refreshSchema, refreshTierSchema, resolveRefresh, type RefreshTier } from './refresh.js';
import { durationSchema, scheduleOf, scheduleRules, scheduleShape, type Schedule } from './schedule.js';
import type { Locator } from './yaml.js';

/** Public, so anything else that names a stream holds it to the same rule as the file. */
export const STREAM_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/i;
/** For an earthquake stream that sets no `lookback`. */
export const DEFAULT_LOOKBACK_MS = DAY_MS;

export interface EarthquakeStreamConfig {
  name: string;
  minMagnitude: number | null;
  circle: { latitude: number; longitude: number; radiusKm: number } | null;
  /** With `refresh`: the first tier's schedule (the most frequent re-read). */
  schedule: Schedule;
  /** With `refresh`: the last tier's withinMs (how far back the stream re-reads at all). */
  lookbackMs: number;
  /** At least one tier; a stream without `refresh` has one, `{ withinMs: lookbackMs, fromMs: 0, schedule }`. */
  refresh: RefreshTier[];
  backfillFrom: Date | null;
  enabled: boolean;
}

export interface IndicatorStreamConfig {
  name: string;
  indicators: string[];
  countries: string[];
  fromYear: number | null;
  toYear: number | null;
  schedule: Schedule;
  enabled: boolean;
}

// ---- Fields both kinds use ----

const streamNameSchema = z
  .string()
  .regex(STREAM_NAME_PATTERN, 'must be 1 to 63 letters, digits, _ . or -, starting with a letter or digit');

/** The domain's one rule for instants (as the CLI's --from and --to have it), and not in the future. */
function checkInstant(text: string, now: Date): Check<Date> {
  const parsed = parseInstant(text);
  if (!parsed.ok) return fail(parsed.problem);
  if (parsed.ms > now.getTime()) {
    return fail(`must not be in the future (now is ${now.toISOString()}), got ${JSON.stringify(text)}`);
  }
  return ok(new Date(parsed.ms));
}

/** Per parse, because "the future" depends on the clock the caller passed. */
const instantSchema = (now: Date) => checkedString(INSTANT_FORMS, (s) => checkInstant(s, now));

// ---- Earthquake streams ----

/** Every circle key is optional here: "set together" is a cross-field rule, see `earthquakeRules`. */
function earthquakeSchema(now: Date) {
  return z.strictObject({
    name: streamNameSchema,
    enabled: z.boolean().optional(),
    min_magnitude: magnitudeSchema.optional(),
    circle: z
      .strictObject({
        latitude: latitudeSchema.optional(),
        longitude: longitudeSchema.optional(),
        radius_km: radiusKmSchema.optional(),
      })
      .optional(),
    ...scheduleShape(),
    lookback: durationSchema.optional(),
    refresh: refreshSchema.optional(),
    backfill_from: instantSchema(now).optional(),
  });
}

function earthquakeRules(item: Record<string, unknown>, base: readonly Segment[], report: Report): void {
  // `refresh` replaces schedule, every and lookback: its tiers carry their own.
  if (has(item, 'refresh')) refreshRules(item, base, report);
  else scheduleRules(item, base, report, { refresh: true });
  if (!isRecord(item.circle)) return;
  const circle = item.circle;
  // This rule is about which keys are set; a wrong value (a string, an empty value) is the schema's
  // problem. So each key that is set, whatever its value, stands in as a number.
  const part = (key: string): number | undefined => (has(circle, key) ? 0 : undefined);
  const parts = circleFromParts({
    latitude: part('latitude'),
    longitude: part('longitude'),
    radiusKm: part('radius_km'),
  });
  // An empty `circle: {}` is refused as well: leaving `circle` out is how a stream says worldwide.
  if (parts === null || parts === 'partial') {
    report([...base, 'circle'], 'latitude, longitude and radius_km must be set together');
  }
}

function resolveEarthquake(s: z.output<ReturnType<typeof earthquakeSchema>>): EarthquakeStreamConfig {
  const c = s.circle;
  const circle = circleFromParts({ latitude: c?.latitude, longitude: c?.longitude, radiusKm: c?.radius_km });
  if (circle === 'partial') throw new Error('unreachable: a partial circle passed validation');
  let schedule: Schedule;
  let lookbackMs: number;
  let refresh: RefreshTier[];
  if (s.refresh !== undefined) {
    refresh = resolveRefresh(s.refresh);
    // The single-schedule fields stay meaningful for readers that know nothing of tiers.
    schedule = refresh[0]!.schedule;
    lookbackMs = refresh[refresh.length - 1]!.withinMs;
  } else {
    schedule = scheduleOf(s);
    lookbackMs = s.lookback ?? DEFAULT_LOOKBACK_MS;
    refresh = [{ withinMs: lookbackMs, fromMs: 0, schedule }];
  }
  return {
    name: s.name,
    minMagnitude: s.min_magnitude ?? null,
    circle,
    schedule,
    lookbackMs,
    refresh,
    backfillFrom: s.backfill_from ?? null,
    enabled: s.enabled ?? true,
  };
}

// ---- Indicator streams ----

function indicatorSchema(now: Date) {
  const year = yearSchema(currentYearEverywhere(now.getTime()));
  // Upper-cased before the code rule, so `us` is accepted as US.
  const country = z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(countryCodeSchema);

  return z.strictObject({
    name: streamNameSchema,
    enabled: z.boolean().optional(),
    indicators: z.array(indicatorCodeSchema).min(1),
    countries: z.array(country).min(1),
    from_year: year.optional(),
    to_year: year.optional(),
    ...scheduleShape(),
  });
}

function indicatorRules(item: Record<string, unknown>, base: readonly Segment[], report: Report, now: Date): void {
  // Only years the schema accepts are compared, so a bad year is reported once, by the schema.
  const year = yearSchema(currentYearEverywhere(now.getTime()));
  const validYear = (v: unknown): v is number => year.safeParse(v).success;
  if (validYear(item.from_year) && validYear(item.to_year) && item.to_year < item.from_year) {
    report([...base, 'to_year'], `must not be before from_year (${item.from_year}), got ${item.to_year}`);
  }
  duplicateCodes(item, 'indicators', base, report);
  duplicateCodes(item, 'countries', base, report);
}

/** Codes are compared without regard to case: countries are upper-cased anyway. */
function duplicateCodes(item: Record<string, unknown>, key: string, base: readonly Segment[], report: Report): void {
  const codes = item[key];
  if (!Array.isArray(codes)) return;
  const seen = new Map<string, number>();
  codes.forEach((code: unknown, j) => {
    if (typeof code !== 'string') return;
    const first = seen.get(code.toUpperCase());
    if (first !== undefined) report([...base, key, j], `duplicate of ${key}[${first}] (${JSON.stringify(code)})`);
    else seen.set(code.toUpperCase(), j);
  });
}

function resolveIndicator(s: z.output<ReturnType<typeof indicatorSchema>>): IndicatorStreamConfig {
  return {
    name: s.name,
    indicators: s.indicators,
    countries: s.countries,
    fromYear: s.from_year ?? null,
    toYear: s.to_year ?? null,
    schedule: scheduleOf(s),
    enabled: s.enabled ?? true,
  };
}

// ---- The document ----
// Last: ALLOWED_KEYS builds the schema while this module loads, so every field schema must exist by then.

export function jobsFileSchema(now: Date) {
  return z.strictObject({
    earthquakes: z.array(earthquakeSchema(now)).nullable().optional(),
    indicators: z.array(indicatorSchema(now)).nullable().optional(),
  });
}

/** The keys each mapping accepts, for "unknown key" messages (read from the schema itself). */
const ALLOWED_KEYS = (() => {
  const root = jobsFileSchema(new Date(0));
  const earthquake = root.shape.earthquakes.unwrap().unwrap().element;
  const indicator = root.shape.indicators.unwrap().unwrap().element;
  return {
    root: Object.keys(root.shape),
    earthquake: Object.keys(earthquake.shape),
    circle: Object.keys(earthquake.shape.circle.unwrap().shape),
    refreshTier: Object.keys(refreshTierSchema.shape),
    indicator: Object.keys(indicator.shape),
  };
})();

export function allowedKeysAt(path: readonly Segment[]): readonly string[] {
  if (path.length === 0) return ALLOWED_KEYS.root;
  if (path.length === 2) return path[0] === 'earthquakes' ? ALLOWED_KEYS.earthquake : ALLOWED_KEYS.indicator;
  if (path.length === 3 && path[0] === 'earthquakes' && path[2] === 'circle') return ALLOWED_KEYS.circle;
  if (path.length === 4 && path[0] === 'earthquakes' && path[2] === 'refresh') return ALLOWED_KEYS.refreshTier;
  return [];
}

/** Every cross-field rule, run on the raw document; each problem is placed on its line by `at`. */
export function crossFieldProblems(root: Record<string, unknown>, at: Locator, now: Date): RawProblem[] {
  const problems: RawProblem[] = [];
  const report: Report = (path, reason) => {
    problems.push({ path, line: at.lineOf(path), reason });
  };
  const nameRule = uniqueNameRule(at);
  let streams = 0;
  let listsValid = true;
  for (const kind of ['earthquakes', 'indicators'] as const) {
    const list = root[kind];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      listsValid = false;
      continue;
    }
    streams += list.length;
    list.forEach((item: unknown, i) => {
      if (!isRecord(item)) return;
      const base: Segment[] = [kind, i];
      nameRule(item, base, report);
      if (kind === 'earthquakes') earthquakeRules(item, base, report);
      else {
        scheduleRules(item, base, report);
        indicatorRules(item, base, report, now);
      }
    });
  }
  // A list of the wrong type is reported by the schema; "no stream" on top of it would be noise.
  if (listsValid && streams === 0) {
    report([], 'declares no stream: add at least one under earthquakes or indicators');
  }
  return problems;
}

/** Names are unique across both kinds, without regard to case; the message points at the first use. */
function uniqueNameRule(at: Locator) {
  const names = new Map<string, Segment[]>();
  return (item: Record<string, unknown>, base: readonly Segment[], report: Report): void => {
    const name = item.name;
    // An invalid name is reported by the schema; comparing it too would only repeat that.
    if (typeof name !== 'string' || !STREAM_NAME_PATTERN.test(name)) return;
    const first = names.get(name.toLowerCase());
    if (first) {
      const where = `${formatPath(first)} (line ${at.lineOf(first)})`;
      report([...base, 'name'], `duplicate stream name ${JSON.stringify(name)}: already used by ${where}`);
    } else {
      names.set(name.toLowerCase(), [...base, 'name']);
    }
  };
}

/** The typed streams of a document the schema accepted and no cross-field rule objected to. */
export function resolveStreams(parsed: z.output<ReturnType<typeof jobsFileSchema>>): {
  earthquakes: EarthquakeStreamConfig[];
  indicators: IndicatorStreamConfig[];
} {
  return {
    earthquakes: (parsed.earthquakes ?? []).map(resolveEarthquake),
    indicators: (parsed.indicators ?? []).map(resolveIndicator),
  };
}
