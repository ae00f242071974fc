import { Readable } from 'node:stream';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, readBody } from '../../src/gateway/body.js';

const JSON_TEXT = JSON.stringify({ code: 0, data: { execution: { outcome: 'succeeded' }, result: { events: [] } } });

/** A body arriving in chunks of `size` bytes, as a socket delivers it. */
function arriving(bytes: Buffer, size = 7, failAfter: number | null = null): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return new Readable({
    read() {
      if (failAfter !== null && failAfter-- <= 0) return void this.destroy(new Error('other side closed'));
      this.push(chunks.shift() ?? null);
    },
  });
}

describe('readBody', () => {
  it.each([
    ['none', Buffer.from(JSON_TEXT), undefined],
    ['identity', Buffer.from(JSON_TEXT), 'identity'],
    ['gzip', gzipSync(JSON_TEXT), 'gzip'],
    ['x-gzip, upper case', gzipSync(JSON_TEXT), 'X-GZIP'],
    ['deflate', deflateSync(JSON_TEXT), 'deflate'],
    ['deflate sent bare, with no zlib wrapping', deflateRawSync(JSON_TEXT), 'deflate'],
    ['gzip then bare deflate', deflateRawSync(gzipSync(JSON_TEXT)), 'gzip, deflate'],
    ['br', brotliCompressSync(JSON_TEXT), 'br'],
    ['gzip then br, undone last first', brotliCompressSync(gzipSync(JSON_TEXT)), 'gzip, br'],
  ])('decodes a body in content coding %s', async (_, bytes, coding) => {
    expect(await readBody(arriving(bytes), coding)).toEqual({ text: JSON_TEXT, error: null });
    expect(await readBody(arriving(bytes, 1), coding)).toEqual({ text: JSON_TEXT, error: null });
  });

  it('drops a leading byte order mark, and keeps a character split between chunks whole', async () => {
    const text = `\uFEFF{"place":"Ōtautahi — 北海道"}`;
    expect(await readBody(arriving(Buffer.from(text), 1), undefined)).toEqual({ text: text.slice(1), error: null });
  });

  it('keeps what arrived of a body cut off midway, with the error that cut it', async () => {
    const got = await readBody(arriving(Buffer.from(JSON_TEXT), 10, 3), undefined);
    expect(got.text).toBe(JSON_TEXT.slice(0, 30));
    expect(String(got.error)).toMatch(/other side closed/);
  });

  it('refuses a coding the request did not ask for, and a broken encoded body', async () => {
    const zstd = await readBody(arriving(Buffer.from('xx')), 'zstd');
    expect(String(zstd.error)).toMatch(/content coding "zstd", which the request did not ask for/);
    const broken = await readBody(arriving(Buffer.from('not gzip at all')), 'gzip');
    expect(broken.error).not.toBeNull();
    for (const bytes of [Buffer.from([0x78]), deflateSync(JSON_TEXT).subarray(0, 20), Buffer.from([0xff, 0xff, 1])]) {
      const deflate = await readBody(arriving(bytes, 3), 'deflate');
      expect(deflate.error, bytes.toString('hex')).not.toBeNull();
    }
  });

  it('stops inflating a bare deflate body past MAX_BODY_BYTES', async () => {
    const bomb = deflateRawSync(Buffer.alloc(MAX_BODY_BYTES + 1_000_000, 0x20));
    const got = await readBody(arriving(bomb, 65_536), 'deflate');
    expect(String(got.error)).toMatch(/passed \d+ bytes and was cut off/);
    expect(got.text.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
  });

  it('keeps what a bare deflate body cut off midway decoded, with the error that cut it', async () => {
    const got = await readBody(arriving(deflateRawSync(JSON_TEXT), 10, 2), 'deflate');
    expect(JSON_TEXT.startsWith(got.text)).toBe(true);
    expect(String(got.error)).toMatch(/other side closed/);
  });
});
