/**
 * How problems are worded and placed, in one module so every rule describes values the same way:
 * the wording (`describe`, the zod error map, unknown keys), problem paths, the hand-written field
 * checks, and the guards rules use to read the raw document.
 */
import * as z from 'zod';

// ---- Wording ----

const TYPE_LABELS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
};

export function describe(value: unknown): string {
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return `the string ${JSON.stringify(shown)}`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined) return String(value);
  return typeof value;
}

/** Per-parse zod error map: plain-English reasons; messages set by a schema itself still win. */
export const errorMap: z.core.$ZodErrorMap = (iss) => {
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

export function unknownKeyReason(key: string, allowed: readonly string[]): string {
  const close = allowed.find((k) => editDistance(k, key.toLowerCase()) <= 2);
  if (close) return `unknown key (did you mean ${close}?)`;
  return allowed.length > 0 ? `unknown key (allowed: ${allowed.join(', ')})` : 'unknown key';
}

// ---- Problem paths ----
// Paths stay as segments until the file is refused, so that lines can still be looked up in the YAML tree.

export type Segment = string | number;

/** A problem before it is tied to a file: a value path plus a line. */
export interface RawProblem {
  path: Segment[];
  line: number;
  reason: string;
}

/** How a rule reports a problem; the caller decides the line, so rules need no YAML positions. */
export type Report = (path: Segment[], reason: string) => void;

const ROOT_PATH = '(root)';

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

// ---- Field checks ----
// Hand-written checks are wrapped as zod schemas so their reasons land in the same issue list as
// every other schema rule (and so one bad field never stops the others being checked).

export type Check<T> = { ok: true; value: T } | { ok: false; reason: string };
export const ok = <T>(value: T): Check<T> => ({ ok: true, value });
export const fail = <T>(reason: string): Check<T> => ({ ok: false, reason });

/** A string checked (and converted) by `check`; its reason becomes the zod issue message. */
export function checkedString<T>(what: string, check: (s: string) => Check<T>) {
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

// ---- Raw document ----
// Cross-field rules read the document as plain JS before validation, so that they still run when
// some fields are invalid; these guards let them cope with any shape.

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Set at all, whatever its value: an empty (`null`) value counts, the schema reports it. */
export const has = (obj: Record<string, unknown>, key: string): boolean => obj[key] !== undefined;
