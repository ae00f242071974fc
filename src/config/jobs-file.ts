/**
 * jobs.yaml: the streams the pipeline ingests (see docs/jobs-yaml.md).
 *
 * The file is parsed ONCE into a resolved, typed value. Every rule of the gateway spec (parts 4 and 8)
 * is applied at load, so a stream that loads can always be planned into valid gateway requests.
 * An invalid file is refused as a whole, with every problem listed as `file:line  path: reason`.
 */
import { readFile } from 'node:fs/promises';
import cronParser from 'cron-parser';
import {
  LineCounter,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  type Document,
  type LineCounter as LineCounterType,
} from 'yaml';
import { z } from 'zod';
import { UsageError } from '../cli/exit.js';
import {
  LIMITS,
  countryCodeSchema,
  indicatorCodeSchema,
  latitudeSchema,
  longitudeSchema,
  magnitudeSchema,
  radiusKmSchema,
} from '../gateway/schemas.js';
import { DAY_MS, isRfc3339 } from '../gateway/time.js';
import { DURATION_RULE, parseDurationMs } from './durations.js';

export { formatDurationMs, parseDurationMs } from './durations.js';

// ------------------------------------------------------------------ resolved types

export type Schedule =
  | { kind: 'cron'; pattern: string; timezone: string | null }
  | { kind: 'every'; everyMs: number };

export interface EarthquakeStreamConfig {
  name: string;
  minMagnitude: number | null;
  circle: { latitude: number; longitude: number; radiusKm: number } | null;
  schedule: Schedule;
  lookbackMs: number;
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

export interface ResolvedJobsFile {
  path: string;
  earthquakes: EarthquakeStreamConfig[];
  indicators: IndicatorStreamConfig[];
}

/**
 * One problem of an invalid file. `line` is 1-based: the line of the offending value, or of the
 * parent key when the value is missing; 0 when the file itself could not be read (then `path` is '').
 * `path` is like `earthquakes[1].circle.radius_km`, `(root)` for the document as a whole.
 */
export interface JobsFileProblem {
  file: string;
  line: number;
  path: string;
  reason: string;
}

export function formatJobsFileProblem(p: JobsFileProblem): string {
  if (p.line === 0 && p.path === '') return `${p.file}: ${p.reason}`;
  return `${p.file}:${p.line}  ${p.path}: ${p.reason}`;
}

/** The whole file is refused; `message` lists every problem, one per line. Exit code 2. */
export class JobsFileError extends UsageError {
  readonly problems: JobsFileProblem[];

  constructor(problems: JobsFileProblem[]) {
    super(problems.map(formatJobsFileProblem).join('\n'));
    this.problems = problems;
  }
}

// ------------------------------------------------------------------ constants

export const DEFAULT_JOBS_FILE = './jobs.yaml';
export const STREAM_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/i;
export const DEFAULT_LOOKBACK_MS = DAY_MS;

const ROOT_PATH = '(root)';
const CIRCLE_KEYS = ['latitude', 'longitude', 'radius_km'] as const;

// ------------------------------------------------------------------ field checks

type Check<T> = { ok: true; value: T } | { ok: false; reason: string };
const ok = <T>(value: T): Check<T> => ({ ok: true, value });
const fail = <T>(reason: string): Check<T> => ({ ok: false, reason });

/** A string checked (and converted) by `check`; its reason becomes the zod issue message. */
function checkedString<T>(what: string, check: (s: string) => Check<T>) {
  const notString = (iss: { input?: unknown }) =>
    iss.input === undefined ? 'required' : `must be ${what}, got ${describe(iss.input)}`;
  return z.string({ error: notString }).transform((s, ctx) => {
    const r = check(s);
    if (!r.ok) {
      ctx.issues.push({ code: 'custom', message: r.reason, input: s });
      return z.NEVER;
    }
    return r.value;
  });
}

/** 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first. */
function checkCronPattern(text: string): Check<string> {
  const fields = text.trim().split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5 && fields.length !== 6) {
    return fail(
      `must be a cron pattern of 5 fields (minute hour day-of-month month day-of-week) ` +
        `or 6 with seconds first, got ${fields.length} field${fields.length === 1 ? '' : 's'}`,
    );
  }
  const pattern = fields.join(' ');
  try {
    cronParser.parseExpression(pattern, { utc: true }).next();
  } catch (error) {
    return fail(`invalid cron pattern: ${error instanceof Error ? error.message : String(error)}`);
  }
  return ok(pattern);
}

function checkDuration(text: string): Check<number> {
  const ms = parseDurationMs(text);
  return ms === null ? fail(`${DURATION_RULE}, got ${JSON.stringify(text)}`) : ok(ms);
}

/** An IANA time zone name known to this runtime's Intl, returned in its canonical spelling. */
function checkTimezone(text: string): Check<string> {
  try {
    return ok(new Intl.DateTimeFormat('en-US', { timeZone: text }).resolvedOptions().timeZone);
  } catch {
    return fail(`unknown time zone ${JSON.stringify(text)}: use an IANA name such as UTC or Europe/Berlin`);
  }
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` (UTC midnight) or an RFC 3339 timestamp, not after `now`. */
function checkInstant(text: string, now: Date): Check<Date> {
  let instant: Date;
  const m = DATE_ONLY.exec(text);
  if (m) {
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    instant = new Date(0);
    instant.setUTCFullYear(year, month - 1, day);
    if (instant.getUTCFullYear() !== year || instant.getUTCMonth() !== month - 1 || instant.getUTCDate() !== day) {
      return fail(`${JSON.stringify(text)} is not a calendar date`);
    }
  } else if (isRfc3339(text)) {
    instant = new Date(Date.parse(text));
  } else {
    return fail(
      'must be a date (YYYY-MM-DD, UTC midnight) or an RFC 3339 timestamp (2000-01-01T00:00:00Z), ' +
        `got ${JSON.stringify(text)}`,
    );
  }
  if (instant.getTime() > now.getTime()) {
    return fail(`must not be in the future (now is ${now.toISOString()}), got ${JSON.stringify(text)}`);
  }
  return ok(instant);
}

// ------------------------------------------------------------------ schemas

/**
 * Field-by-field rules. Rules that tie several fields together (schedule xor every, the circle,
 * to_year >= from_year, unique names) are checked on the raw document by `crossFieldProblems`,
 * so that one bad field never hides another problem of the same stream.
 */
function jobsFileSchema(now: Date) {
  const currentYear = now.getUTCFullYear();
  const name = z
    .string()
    .regex(STREAM_NAME_PATTERN, 'must be 1 to 63 letters, digits, _ . or -, starting with a letter or digit');
  const cron = checkedString('a cron pattern (quoted, such as "*/10 * * * *")', checkCronPattern);
  const duration = checkedString('a duration such as 30s, 10m, 6h or 7d', checkDuration);
  const timezone = checkedString('an IANA time zone name such as UTC', checkTimezone);
  const instant = checkedString('a date (YYYY-MM-DD) or an RFC 3339 timestamp', (s) => checkInstant(s, now));
  const year = z
    .number()
    .int()
    .min(LIMITS.firstYear)
    .max(currentYear, {
      error: (iss) => `must not be after the current year (${currentYear}), got ${String(iss.input)}`,
    });
  const country = z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(countryCodeSchema);

  const earthquake = z.strictObject({
    name,
    enabled: z.boolean().optional(),
    min_magnitude: magnitudeSchema.optional(),
    circle: z
      .strictObject({
        latitude: latitudeSchema.optional(),
        longitude: longitudeSchema.optional(),
        radius_km: radiusKmSchema.optional(),
      })
      .optional(),
    schedule: cron.optional(),
    every: duration.optional(),
    timezone: timezone.optional(),
    lookback: duration.optional(),
    backfill_from: instant.optional(),
  });

  const indicator = z.strictObject({
    name,
    enabled: z.boolean().optional(),
    indicators: z.array(indicatorCodeSchema).min(1),
    countries: z.array(country).min(1),
    from_year: year.optional(),
    to_year: year.optional(),
    schedule: cron.optional(),
    every: duration.optional(),
    timezone: timezone.optional(),
  });

  return z.strictObject({
    earthquakes: z.array(earthquake).nullable().optional(),
    indicators: z.array(indicator).nullable().optional(),
  });
}

type Parsed = z.output<ReturnType<typeof jobsFileSchema>>;
type Segment = string | number;

/** The keys each mapping accepts, for "unknown key" messages (read from the schema itself). */
const ALLOWED_KEYS = (() => {
  const root = jobsFileSchema(new Date(0));
  const earthquake = root.shape.earthquakes.unwrap().unwrap().element;
  const indicator = root.shape.indicators.unwrap().unwrap().element;
  return {
    root: Object.keys(root.shape),
    earthquake: Object.keys(earthquake.shape),
    circle: Object.keys(earthquake.shape.circle.unwrap().shape),
    indicator: Object.keys(indicator.shape),
  };
})();

function allowedKeysAt(path: readonly Segment[]): readonly string[] {
  if (path.length === 0) return ALLOWED_KEYS.root;
  if (path.length === 2) return path[0] === 'earthquakes' ? ALLOWED_KEYS.earthquake : ALLOWED_KEYS.indicator;
  if (path.length === 3 && path[0] === 'earthquakes' && path[2] === 'circle') return ALLOWED_KEYS.circle;
  return [];
}

// ------------------------------------------------------------------ messages

const TYPE_LABELS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
};

function describe(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  return String(value);
}

/** Per-parse zod error map: plain-English reasons; messages set by a schema itself still win. */
const errorMap: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      return `must be ${TYPE_LABELS[iss.expected] ?? iss.expected}, got ${describe(iss.input)}`;
    case 'too_small':
      if (iss.origin === 'array') return `must list at least ${String(iss.minimum)} item`;
      return `must be ${iss.inclusive ? 'at least' : 'greater than'} ${String(iss.minimum)}, got ${String(iss.input)}`;
    case 'too_big':
      if (iss.origin === 'array') return `must list at most ${String(iss.maximum)} items`;
      return `must be ${iss.inclusive ? 'at most' : 'less than'} ${String(iss.maximum)}, got ${String(iss.input)}`;
    default:
      return undefined;
  }
};

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

function unknownKeyReason(key: string, allowed: readonly string[]): string {
  const close = allowed.find((k) => editDistance(k, key.toLowerCase()) <= 2);
  if (close) return `unknown key (did you mean ${close}?)`;
  return allowed.length > 0 ? `unknown key (allowed: ${allowed.join(', ')})` : 'unknown key';
}

export function formatPath(path: readonly Segment[]): string {
  if (path.length === 0) return ROOT_PATH;
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

// ------------------------------------------------------------------ YAML positions

type YamlDoc = Document.Parsed;

/** Maps value paths to source lines through the YAML syntax tree. */
class Locator {
  constructor(
    private readonly doc: YamlDoc,
    private readonly lines: LineCounterType,
  ) {}

  lineAt(offset: number): number {
    return this.lines.linePos(offset).line;
  }

  startLine(node: unknown, fallback: number): number {
    if (node !== null && typeof node === 'object' && 'range' in node) {
      const range = (node as { range?: readonly number[] | null }).range;
      if (range && typeof range[0] === 'number') return this.lineAt(range[0]);
    }
    return fallback;
  }

  /** The line of the value at `path`; of the deepest existing parent key when it is missing. */
  lineOf(path: readonly Segment[], opts: { key?: boolean } = {}): number {
    let node: unknown = this.doc.contents;
    let line = this.startLine(node, 1);
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node)) {
        const pair = node.items.findLast((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) return line;
        line = this.startLine(pair.key, line);
        if (opts.key && i === path.length - 1) return line;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === 'number') {
        const item: unknown = node.items[seg];
        if (item === undefined) return line;
        line = this.startLine(item, line);
        node = item;
      } else {
        return line;
      }
    }
    return isScalar(node) ? this.startLine(node, line) : line;
  }

  /**
   * Best-effort path of the deepest node holding `offset`, for syntax errors. With `upTo`, a node
   * ending exactly at `offset` holds it too: that is where an unclosed quote or bracket ends.
   */
  nodeAt(offset: number, upTo = false): { path: Segment[]; start: number | null; end: number | null } {
    const path: Segment[] = [];
    const rangeOf = (n: unknown): readonly number[] | null =>
      n !== null && typeof n === 'object' && 'range' in n
        ? ((n as { range?: readonly number[] | null }).range ?? null)
        : null;
    const holds = (n: unknown): boolean => {
      const range = rangeOf(n);
      if (!range || range[0] === undefined || range[1] === undefined) return false;
      const end = range[2] ?? range[1];
      return range[0] <= offset && (offset < end || (upTo && offset === end));
    };
    const found = (n: unknown) => {
      const range = rangeOf(n);
      return { path, start: range?.[0] ?? null, end: range ? (range[2] ?? range[1] ?? null) : null };
    };
    let node: unknown = this.doc.contents;
    for (;;) {
      if (isMap(node)) {
        const pair = node.items.find((p) => holds(p.key) || holds(p.value));
        if (!pair || !isScalar(pair.key)) return found(node);
        path.push(String(pair.key.value));
        if (!holds(pair.value)) return found(pair.key);
        node = pair.value;
      } else if (isSeq(node)) {
        const index = node.items.findIndex(holds);
        if (index < 0) return found(node);
        path.push(index);
        node = node.items[index];
      } else {
        return found(node);
      }
    }
  }
}

interface RawProblem {
  path: Segment[];
  line: number;
  reason: string;
}

/**
 * What the YAML syntax tree alone shows: duplicate keys (`duplicates`, reported with everything else)
 * and keys that are not plain scalars or aliases to nowhere (`broken`: the tree cannot be read).
 */
function treeProblems(doc: YamlDoc, at: Locator): { duplicates: RawProblem[]; broken: RawProblem[] } {
  const duplicates: RawProblem[] = [];
  const broken: RawProblem[] = [];
  const walk = (node: unknown, path: Segment[]): void => {
    if (isAlias(node)) {
      if (node.resolve(doc) === undefined) {
        broken.push({ path, line: at.lineOf(path), reason: `alias *${node.source} refers to no anchor` });
      }
      return;
    }
    if (isMap(node)) {
      const seen = new Map<string, number>();
      for (const pair of node.items) {
        if (!isScalar(pair.key)) {
          broken.push({ path, line: at.startLine(pair.key, at.lineOf(path)), reason: 'keys must be plain names' });
          continue;
        }
        const key = String(pair.key.value);
        const line = at.startLine(pair.key, at.lineOf(path));
        const first = seen.get(key);
        if (first !== undefined) {
          duplicates.push({ path: [...path, key], line, reason: `duplicate key (first set at line ${first})` });
        } else {
          seen.set(key, line);
        }
        walk(pair.value, [...path, key]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i]));
    }
  };
  walk(doc.contents, []);
  return { duplicates, broken };
}

// ------------------------------------------------------------------ cross-field rules

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const has = (obj: Record<string, unknown>, key: string): boolean => obj[key] !== undefined;

function crossFieldProblems(root: Record<string, unknown>, at: Locator, now: Date): RawProblem[] {
  const problems: RawProblem[] = [];
  const push = (path: Segment[], reason: string): void => {
    problems.push({ path, line: at.lineOf(path), reason });
  };
  const names = new Map<string, Segment[]>();
  const currentYear = now.getUTCFullYear();
  const validYear = (v: unknown): v is number =>
    typeof v === 'number' && Number.isInteger(v) && v >= LIMITS.firstYear && v <= currentYear;

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

      const name = item.name;
      if (typeof name === 'string' && STREAM_NAME_PATTERN.test(name)) {
        const first = names.get(name.toLowerCase());
        if (first) {
          const where = `${formatPath(first)} (line ${at.lineOf(first)})`;
          push([...base, 'name'], `duplicate stream name ${JSON.stringify(name)}: already used by ${where}`);
        } else {
          names.set(name.toLowerCase(), [...base, 'name']);
        }
      }

      if (has(item, 'schedule') && has(item, 'every')) {
        push([...base, 'every'], 'set either schedule or every, not both');
      } else if (!has(item, 'schedule') && !has(item, 'every')) {
        push([...base, 'schedule'], 'required: set either schedule (a cron pattern) or every (a duration such as 10m)');
      }
      if (has(item, 'timezone') && !has(item, 'schedule')) {
        push([...base, 'timezone'], 'only applies to schedule (a cron pattern)');
      }

      if (kind === 'earthquakes' && isRecord(item.circle)) {
        const circle = item.circle;
        const set = CIRCLE_KEYS.filter((k) => has(circle, k));
        if (set.length !== CIRCLE_KEYS.length) {
          push([...base, 'circle'], 'latitude, longitude and radius_km must be set together');
        }
      }

      if (kind === 'indicators') {
        if (validYear(item.from_year) && validYear(item.to_year) && item.to_year < item.from_year) {
          push([...base, 'to_year'], `must not be before from_year (${item.from_year}), got ${item.to_year}`);
        }
        // Codes are compared without regard to case: countries are upper-cased anyway.
        for (const key of ['indicators', 'countries'] as const) {
          const codes = item[key];
          if (!Array.isArray(codes)) continue;
          const seen = new Map<string, number>();
          codes.forEach((code: unknown, j) => {
            if (typeof code !== 'string') return;
            const first = seen.get(code.toUpperCase());
            if (first !== undefined) push([...base, key, j], `duplicate of ${key}[${first}] (${JSON.stringify(code)})`);
            else seen.set(code.toUpperCase(), j);
          });
        }
      }
    });
  }
  if (listsValid && streams === 0) {
    push([], 'declares no stream: add at least one under earthquakes or indicators');
  }
  return problems;
}

// ------------------------------------------------------------------ parse

function yamlReason(code: string, message: string): string {
  if (code === 'MULTIPLE_DOCS') return 'the file must hold a single YAML document (remove the --- separator)';
  return `YAML syntax error: ${message}`;
}

function zodProblems(issues: readonly z.core.$ZodIssue[], at: Locator): RawProblem[] {
  const problems: RawProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((s): s is Segment => typeof s === 'string' || typeof s === 'number');
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeysAt(path);
      for (const key of issue.keys) {
        const keyPath = [...path, key];
        const line = at.lineOf(keyPath, { key: true });
        problems.push({ path: keyPath, line, reason: unknownKeyReason(key, allowed) });
      }
    } else if (issue.code === 'invalid_format' && typeof issue.input === 'string') {
      // The code rules of schemas.ts say what is allowed; add what was found.
      problems.push({ path, line: at.lineOf(path), reason: `${issue.message}, got ${describe(issue.input)}` });
    } else {
      problems.push({ path, line: at.lineOf(path), reason: issue.message });
    }
  }
  return problems;
}

function refuse(file: string, raw: RawProblem[]): never {
  const unique = new Map<string, JobsFileProblem>();
  raw
    .map((p, order) => ({ ...p, order }))
    .sort((a, b) => a.line - b.line || a.order - b.order)
    .forEach((p) => {
      const problem = { file, line: p.line, path: formatPath(p.path), reason: p.reason };
      unique.set(formatJobsFileProblem(problem), problem);
    });
  throw new JobsFileError([...unique.values()]);
}

function scheduleOf(s: { schedule?: string | undefined; every?: number | undefined; timezone?: string | undefined }) {
  const schedule: Schedule | null =
    s.schedule !== undefined
      ? { kind: 'cron', pattern: s.schedule, timezone: s.timezone ?? null }
      : s.every !== undefined
        ? { kind: 'every', everyMs: s.every }
        : null;
  if (schedule === null) throw new Error('unreachable: a stream without schedule or every passed validation');
  return schedule;
}

function resolve(file: string, data: Parsed): ResolvedJobsFile {
  return {
    path: file,
    earthquakes: (data.earthquakes ?? []).map((s) => {
      const c = s.circle;
      const circle =
        c && c.latitude !== undefined && c.longitude !== undefined && c.radius_km !== undefined
          ? { latitude: c.latitude, longitude: c.longitude, radiusKm: c.radius_km }
          : null;
      return {
        name: s.name,
        minMagnitude: s.min_magnitude ?? null,
        circle,
        schedule: scheduleOf(s),
        lookbackMs: s.lookback ?? DEFAULT_LOOKBACK_MS,
        backfillFrom: s.backfill_from ?? null,
        enabled: s.enabled ?? true,
      };
    }),
    indicators: (data.indicators ?? []).map((s) => ({
      name: s.name,
      indicators: s.indicators,
      countries: s.countries,
      fromYear: s.from_year ?? null,
      toYear: s.to_year ?? null,
      schedule: scheduleOf(s),
      enabled: s.enabled ?? true,
    })),
  };
}

/**
 * Parse and validate the text of a jobs file. Pure: `now` decides "not in the future" and
 * "the current year". Throws JobsFileError listing every problem.
 */
export function parseJobsFile(text: string, file: string, now: () => Date = () => new Date()): ResolvedJobsFile {
  const clock = now();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: false, // reported by treeProblems, with the path and the first line
    version: '1.2', // also under a `%YAML 1.1` directive: no timestamps, no yes/no booleans
    schema: 'core',
  });
  const at = new Locator(doc, lineCounter);

  const problems: RawProblem[] = [];
  for (const e of [...doc.errors, ...doc.warnings]) {
    const offset = e.pos[0];
    const reason = e.name === 'YAMLWarning' ? `YAML error: ${e.message}` : yamlReason(e.code, e.message);
    const unclosed = e.code === 'MISSING_CHAR' || /end with a/.test(e.message);
    const node = at.nodeAt(offset, unclosed);
    const errorAt = lineCounter.linePos(offset);
    if (unclosed && node.start !== null && node.end === offset && at.lineAt(node.start) < errorAt.line) {
      // Point at the quote or bracket that was opened, not at where the parser gave up.
      const openedAt = lineCounter.linePos(node.start);
      problems.push({
        path: node.path,
        line: openedAt.line,
        reason: `${reason} (column ${openedAt.col}: the value is not closed before line ${errorAt.line})`,
      });
    } else {
      problems.push({ path: node.path, line: errorAt.line, reason: `${reason} (column ${errorAt.col})` });
    }
  }
  const tree = treeProblems(doc, at);
  problems.push(...tree.broken);
  // Past a syntax error the tree is guesswork: checking its values would only add noise.
  if (problems.length > 0) refuse(file, [...problems, ...tree.duplicates]);
  // Duplicate keys are listed with every other problem; validation below sees the last value.
  problems.push(...tree.duplicates);

  let root: unknown;
  try {
    root = doc.toJS(); // throws on an alias bomb (more than 100 alias expansions)
  } catch (error) {
    const reason = `YAML error: ${error instanceof Error ? error.message : String(error)}`;
    refuse(file, [...problems, { path: [], line: 1, reason }]);
  }
  if (root === null || root === undefined) {
    const reason = 'the file is empty: declare at least one stream under earthquakes or indicators';
    refuse(file, [...problems, { path: [], line: 1, reason }]);
  }
  if (!isRecord(root)) {
    const reason = `must be a mapping with the keys earthquakes and/or indicators, got ${describe(root)}`;
    refuse(file, [...problems, { path: [], line: at.lineOf([]), reason }]);
  }

  const parsed = jobsFileSchema(clock).safeParse(root, { error: errorMap, reportInput: true });
  if (!parsed.success) problems.push(...zodProblems(parsed.error.issues, at));
  problems.push(...crossFieldProblems(root, at, clock));
  if (problems.length > 0 || !parsed.success) refuse(file, problems);
  return resolve(file, parsed.data);
}

/** Read and parse a jobs file; a file that cannot be read is a JobsFileError naming the path. */
export async function loadJobsFile(path: string, now: () => Date = () => new Date()): Promise<ResolvedJobsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    const reason =
      code === 'ENOENT'
        ? 'jobs file not found: create it (see docs/jobs-yaml.md) or pass --config PATH'
        : code === 'EISDIR'
          ? 'is a directory, not a jobs file'
          : code === 'EACCES'
            ? 'cannot read the jobs file: permission denied'
            : `cannot read the jobs file: ${error instanceof Error ? error.message : String(error)}`;
    throw new JobsFileError([{ file: path, line: 0, path: '', reason }]);
  }
  return parseJobsFile(text, path, now);
}
