/**
 * Hand-written field checks, wrapped as zod schemas so their reasons land in the same issue list
 * as every other schema rule (and so one bad field never stops the others being checked).
 */
import { z } from 'zod';
import { describe } from './messages.js';

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
