/** Plain-English wording of problems, in one place so every rule describes values the same way. */
import type { z } from 'zod';

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
  return String(value);
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
