/** Reading an answer's body: its content coding undone, its size bounded, and whatever arrived kept. */
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';

/**
 * No answer of the spec comes near this (200 events, 70 values): a body past it is cut off rather
 * than held whole, which would let one answer take the worker's memory. Applies after decoding too.
 */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** The body as far as it came, with the error that stopped it, if any. */
export interface BodyRead {
  text: string;
  error: unknown;
}

/** Whether two bytes open a zlib stream (RFC 1950: method 8, window at most 32K, check bits). */
const isZlibHeader = (b: Buffer): boolean =>
  (b[0]! & 0x0f) === 8 && b[0]! >> 4 <= 7 && ((b[0]! << 8) | b[1]!) % 31 === 0;

/**
 * HTTP's deflate is a zlib stream (RFC 9110 8.4.1.2), but servers have long sent bare deflate
 * under that name, and clients read both: the first two bytes tell which this is.
 */
class DeflateDecoder extends Transform {
  #head = Buffer.alloc(0);
  #inner: Transform | null = null;

  override _transform(chunk: Buffer, _: BufferEncoding, done: TransformCallback): void {
    if (this.#inner !== null) return void this.#inner.write(chunk, (e) => done(e ?? undefined));
    this.#head = Buffer.concat([this.#head, chunk]);
    if (this.#head.length < 2) return done();
    const inner = isZlibHeader(this.#head) ? createInflate() : createInflateRaw();
    inner.on('data', (d: Buffer) => this.push(d));
    inner.on('error', (e) => this.destroy(e));
    this.#inner = inner;
    inner.write(this.#head, (e) => done(e ?? undefined));
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    // A body given up on stops its inflating too.
    this.#inner?.destroy();
    done(error);
  }

  override _flush(done: TransformCallback): void {
    const inner = this.#inner ?? createInflateRaw().on('data', (d: Buffer) => this.push(d));
    if (this.#inner === null && this.#head.length > 0) inner.write(this.#head);
    inner.once('end', () => done()).once('error', done);
    inner.end();
  }
}

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: () => new DeflateDecoder(),
  br: createBrotliDecompress,
};

/**
 * RFC 9110 lets a server encode a body in any coding the request did not rule out, so the request
 * asks for these and the body is decoded here, on every status (a success may come with any).
 */
function decoded(body: Readable, contentEncoding: string | string[] | undefined): Readable {
  const codings = [contentEncoding ?? []]
    .flat()
    .flatMap((h) => h.split(','))
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return body;
  const foreign = codings.find((c) => DECODERS[c] === undefined);
  if (foreign !== undefined || codings.length > 3)
    throw new Error(`the body came in content coding "${codings.join(', ')}", which the request did not ask for`);
  // Codings are listed in the order applied, so they are undone last first.
  const stages = codings.reverse().map((c) => DECODERS[c]!());
  // Errors reach the last stage, which the reader iterates; the callback only keeps them from being thrown.
  pipeline([body, ...stages], () => undefined);
  return stages[stages.length - 1]!;
}

/** A body given up on: destroyed, and the abort error that destroying it raises goes nowhere. */
function drop(body: Readable): void {
  body.on('error', () => undefined).destroy();
}

/**
 * Reads the body chunk by chunk so that a body cut off midway still yields what arrived (the
 * execution it began with says whether the gateway billed it). TextDecoder drops a leading byte
 * order mark, which RFC 8259 lets a parser ignore.
 */
export async function readBody(body: Readable, contentEncoding: string | string[] | undefined): Promise<BodyRead> {
  const decoder = new TextDecoder('utf-8');
  let text = '';
  let bytes = 0;
  try {
    for await (const chunk of decoded(body, contentEncoding) as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES) {
        const error = new Error(`the body passed ${MAX_BODY_BYTES} bytes and was cut off there`);
        drop(body);
        return { text: text + decoder.decode(), error };
      }
      text += decoder.decode(chunk, { stream: true });
    }
    return { text: text + decoder.decode(), error: null };
  } catch (error) {
    drop(body);
    return { text: text + decoder.decode(), error };
  }
}
