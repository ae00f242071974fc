import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

export interface ReadBody {
  text: string;
  tooLarge: boolean;
}

/** Reads the whole body, keeping at most `limit` bytes but draining the rest so keep-alive survives. */
export async function readBody(req: IncomingMessage, limit: number): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > limit };
}

/** Hash-then-compare keeps the comparison constant-time whatever the lengths. */
function sameSecret(given: string, key: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(key).digest();
  return timingSafeEqual(a, b);
}

/** Spec part 5: `Authorization: Bearer <key>` or `X-API-Key: <key>`; either one matching is enough. */
export function credentialMatches(headers: IncomingHttpHeaders, key: string): boolean {
  const bearer = /^Bearer\s+(.*\S)\s*$/i.exec(headers.authorization ?? '')?.[1];
  if (bearer !== undefined && sameSecret(bearer, key)) return true;
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && sameSecret(apiKey.trim(), key);
}

/** Spec part 4: the body is JSON with `Content-Type: application/json` (parameters allowed). */
export function isJsonContentType(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json';
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendText(res, status, JSON.stringify(body), headers);
}

/** Resolves after `ms`, or at once when `signal` aborts (so close() never waits for a slow answer). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
