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
