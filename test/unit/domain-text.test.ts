import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_KEY_BYTES,
  REPLACEMENT_CHARACTER,
  groupDigits,
  storableKey,
  UNSTORABLE_ESCAPE,
  storableJson,
  storableOrNull,
  storableText,
} from '../../src/domain/text.js';

/** True when the string is well formed UTF-16 and holds no NUL: what PostgreSQL text can hold. */
function storable(text: string): boolean {
  if (text.includes('\u0000')) return false;
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** Strings of arbitrary UTF-16 code units, surrogates and NUL frequent among them. */
const codeUnits = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.constant(0)))
  .map((units) => String.fromCharCode(...units));

describe('storableText', () => {
  it('replaces NUL and unpaired surrogates, one U+FFFD each, and keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe(`a${REPLACEMENT_CHARACTER}b`);
    expect(storableText('x\ud800y')).toBe(`x${REPLACEMENT_CHARACTER}y`);
    expect(storableText('x\udc00y')).toBe(`x${REPLACEMENT_CHARACTER}y`);
    expect(storableText('\udc00\ud800')).toBe(REPLACEMENT_CHARACTER.repeat(2));
    expect(storableText('ok \ud83d\ude00')).toBe('ok \ud83d\ude00');
    expect(storableOrNull(null)).toBeNull();
  });

  it('always returns storable text, the same length, unchanged when it was storable', () => {
    fc.assert(
      fc.property(codeUnits, (text) => {
        const out = storableText(text);
        expect(storable(out)).toBe(true);
        expect(out.length).toBe(text.length);
        if (storable(text)) expect(out).toBe(text);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('a body that needs it', () => {
  it('is found by its text: JSON holding an unstorable string always shows the escape', () => {
    fc.assert(
      fc.property(codeUnits, (text) => {
        const body = JSON.stringify({ place: text });
        if (!storable(text)) expect(UNSTORABLE_ESCAPE.test(body)).toBe(true);
        // Upper-case hex, as another encoder may write it, is found too.
        if (!storable(text)) expect(UNSTORABLE_ESCAPE.test(body.toUpperCase().replaceAll('\\U', '\\u'))).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('has every string of it made storable, keys included, numbers and nulls kept', () => {
    const parsed: unknown = JSON.parse('{"a\\u0000":["x\\ud800",1,null,true,{"b":"\\udc00"}]}');
    expect(storableJson(parsed)).toEqual({ 'a\uFFFD': ['x\uFFFD', 1, null, true, { b: '\uFFFD' }] });
  });

  it('takes any depth JSON.parse takes: a field the spec does not name may nest deeper than the call stack', () => {
    const depth = 200_000;
    const parsed: unknown = JSON.parse(`{"x":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)},"y":"\\u0000"}`);
    const clean = storableJson(parsed) as { x: unknown; y: string };
    expect(clean.y).toBe('\uFFFD');
    let inner = clean.x;
    for (let i = 0; i < depth; i++) inner = (inner as unknown[])[0];
    expect(inner).toBe('\uFFFD');
  });
});

describe('groupDigits', () => {
  it("writes a count as en-US's number format does, rounded", () => {
    fc.assert(
      fc.property(fc.double({ min: -1e15, max: 1e15, noNaN: true }), (x) => {
        expect(groupDigits(x)).toBe((Math.round(x) + 0).toLocaleString('en-US')); // + 0: a count of -0 is 0
      }),
    );
    expect(groupDigits(31_749)).toBe('31,749');
    expect(groupDigits(999.5)).toBe('1,000');
  });
});

describe('storableKey', () => {
  it('keeps a key of at most MAX_KEY_BYTES UTF-8 bytes, and names a longer one by its digest', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
        const key = storableKey(text);
        if (Buffer.byteLength(text, 'utf8') <= MAX_KEY_BYTES) expect(key).toBe(text);
        else expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(storableKey(text)).toBe(key);
      }),
    );
  });

  it('tells long keys apart that differ anywhere, the last character included', () => {
    const long = 'us7000'.repeat(200);
    expect(storableKey(`${long}a`)).not.toBe(storableKey(`${long}b`));
    expect(storableKey(long.slice(0, MAX_KEY_BYTES))).toBe(long.slice(0, MAX_KEY_BYTES));
    expect(storableKey(long.slice(0, MAX_KEY_BYTES + 1))).toMatch(/^sha256:/);
    // Three bytes a character: 171 of them are one byte too many.
    expect(storableKey('€'.repeat(170))).toBe('€'.repeat(170));
    expect(storableKey('€'.repeat(171))).toMatch(/^sha256:/);
  });
});
