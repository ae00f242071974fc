import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GatewayProxy {
  url: string;
  /** Paths of the requests received so far, in arrival order (the emulator logs on answer). */
  arrivals: string[];
  close(): Promise<void>;
}

/**
 * An answer as the proxy sends it on: its body, or also its HTTP status, headers of its own (a
 * content coding), a byte count after which the connection is cut mid-body, and a delay before it is
 * sent (`delayMs`); or no answer at all,
 * the connection closed before a byte of it (`HANG_UP`), or held open without a byte (`SILENT`).
 */
export type Rewritten =
  | string
  | { hangUp: true }
  | { silent: true }
  | {
      status: number;
      body: string | Buffer;
      headers?: Record<string, string>;
      cutAfterBytes?: number;
      delayMs?: number;
    };

/** No answer: the connection closed before a byte of one. */
export const HANG_UP: Rewritten = { hangUp: true };

/** No answer and no close: the request taken, then nothing (a gateway hung, a dropped route). */
export const SILENT: Rewritten = { silent: true };

/**
 * Forwards every request to `target`, noting when each one arrives; `rewrite` may change each
 * answer's body and status, and `answerFirst` may answer a request itself (given its body), which
 * then never reaches the target.
 */
export async function startGatewayProxy(
  target: string,
  rewrite: (body: string, status: number, asked: IncomingHttpHeaders) => Rewritten = (body) => body,
  answerFirst: (request: string) => Rewritten | null = () => null,
): Promise<GatewayProxy> {
  const arrivals: string[] = [];
  const server = createServer((req, res) => {
    arrivals.push(req.url ?? '/');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'x-api-key', 'content-type']) {
        const v = req.headers[name];
        if (typeof v === 'string') headers[name] = v;
      }
      const own = answerFirst(Buffer.concat(chunks).toString());
      const answer =
        own !== null
          ? Promise.resolve({ out: own, status: 200, contentType: 'application/json' })
          : fetch(`${target}${req.url ?? '/'}`, {
              method: req.method ?? 'POST',
              headers,
              body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
            }).then(async (a) => ({
              out: rewrite(await a.text(), a.status, req.headers),
              status: a.status,
              contentType: a.headers.get('content-type') ?? 'application/json',
            }));
      answer
        .then(({ out, status, contentType }) => {
          if (typeof out === 'object' && 'hangUp' in out) return void res.socket?.destroy();
          if (typeof out === 'object' && 'silent' in out) return;
          const o = typeof out === 'string' ? { status, body: out } : out;
          const body = typeof o.body === 'string' ? Buffer.from(o.body) : o.body;
          const send = () => {
            res.writeHead(o.status, { 'content-type': contentType, 'content-length': body.length, ...o.headers });
            if (o.cutAfterBytes === undefined) res.end(body);
            else res.write(body.subarray(0, o.cutAfterBytes), () => res.socket?.destroy());
          };
          if (o.delayMs === undefined) send();
          else setTimeout(send, o.delayMs);
        })
        .catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
