import { createHash } from 'node:crypto';

/**
 * Text PostgreSQL can hold. A JSON string may carry U+0000 or an unpaired surrogate, and a gateway
 * within the spec may send either, but a PostgreSQL text or jsonb value can hold neither: the write
 * of the whole answer would fail, and every retry would pay for the call again. Each such code unit
 * becomes U+FFFD, the replacement character, as a UTF-8 encoder would write an unpaired surrogate.
 */

/** A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- matching U+0000 is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// eslint-disable-next-line no-control-regex -- matching U+0000 is the point
const ANY_SUSPECT = /[\u0000\ud800-\udfff]/;

export const REPLACEMENT_CHARACTER = '\uFFFD';

export function storableText(text: string): string {
  return ANY_SUSPECT.test(text) ? text.replace(UNSTORABLE, REPLACEMENT_CHARACTER) : text;
}

/** `storableText` that lets null through. */
export function storableOrNull(text: string | null): string | null {
  return text === null ? null : storableText(text);
}

/**
 * A JSON escape that may decode to such a code unit (`\u0000`, `\uD800` to `\uDFFF`): only a body
 * holding one needs `storableJson`, so the common answer costs one scan of its text.
 */
export const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/**
 * A value fresh from JSON.parse with `storableText` applied to every string in it, keys included,
 * changed in place. Walked with a list, not by recursion: JSON.parse takes every depth, and a field the
 * spec does not name may nest deeper than the call stack goes.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  const pending: unknown[] = [value];
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    if (Array.isArray(at)) {
      for (let i = 0; i < at.length; i++) at[i] = storableItem(at[i], pending);
    } else if (at !== null && typeof at === 'object') {
      storableEntries(at as Record<string, unknown>, pending);
    }
  }
  return value;
}

/** A string made storable; an array or object noted for the walk. */
function storableItem(item: unknown, pending: unknown[]): unknown {
  if (typeof item === 'string') return storableText(item);
  if (item !== null && typeof item === 'object') pending.push(item);
  return item;
}

function storableEntries(o: Record<string, unknown>, pending: unknown[]): void {
  for (const key of Object.keys(o)) {
    const item = storableItem(o[key], pending);
    const clean = storableText(key);
    if (clean !== key) {
      delete o[key];
      Object.defineProperty(o, clean, { value: item, enumerable: true, writable: true, configurable: true });
    } else if (item !== o[key]) {
      Object.defineProperty(o, key, { value: item, enumerable: true, writable: true, configurable: true });
    }
  }
}

/**
 * The longest key, in UTF-8 bytes, stored as it is. The spec sets no length for an event id, and
 * a btree entry holds at most about 2,700 bytes: a longer id would fail every write of its answer
 * (and every retry would pay again). Half a kilobyte keeps two such keys in one entry.
 */
export const MAX_KEY_BYTES = 512;

/**
 * A key an index can hold: the text itself when it fits, else `sha256:` and the hex digest of its
 * UTF-8 bytes, which names it as surely and fits any index. The long text itself is kept apart.
 */
export function storableKey(text: string): string {
  // A UTF-16 code unit is at most three UTF-8 bytes: most keys need no byte count.
  if (text.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(text, 'utf8') <= MAX_KEY_BYTES) return text;
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/**
 * A count for people, rounded, its thousands grouped with commas as en-US writes them: a command
 * that prints a few figures need not pay for loading Intl's number formats.
 */
export function groupDigits(x: number): string {
  return String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
