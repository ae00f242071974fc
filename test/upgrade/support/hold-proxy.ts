import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardedHeaders, readAll } from '../../faults/support/hold-proxy.js';

export interface HoldProxy {
  url: string;
  /** Requests passed on to the gateway so far. */
  readonly forwarded: number;
  /** Requests received since hold() and never passed on. */
  readonly held: number;
  /** From now on, requests are kept waiting and never reach the gateway. */
  hold(): void;
  close(): Promise<void>;
}

async function relay(target: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readAll(req);
  const answer = await fetch(`${target}${req.url ?? '/'}`, {
    method: req.method ?? 'POST',
    headers: forwardedHeaders(req),
    body: body.length > 0 ? body : undefined,
  });
  const text = await answer.text();
  const out: Record<string, string> = { 'content-type': answer.headers.get('content-type') ?? 'application/json' };
  const retryAfter = answer.headers.get('retry-after');
  if (retryAfter !== null) out['retry-after'] = retryAfter;
  res.writeHead(answer.status, out);
  res.end(text);
}

/**
 * Stands between a worker and the gateway. Once holding, a request is never passed on: a worker
 * killed while it waits has every earlier answer committed (it writes an answer before asking the
 * next question) and no call the gateway saw but the audit could not record.
 */
export async function startHoldProxy(target: string): Promise<HoldProxy> {
  let forwarded = 0;
  let held = 0;
  let holding = false;
  const server = createServer((req, res) => {
    if (holding) {
      held++;
      return;
    }
    forwarded++;
    relay(target, req, res).catch(() => res.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get forwarded() {
      return forwarded;
    },
    get held() {
      return held;
    },
    hold() {
      holding = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
