/** Reading an answer's body: its content coding undone, its size bounded, and whatever arrived kept. */
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

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

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
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
