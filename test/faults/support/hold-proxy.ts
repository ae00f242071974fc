import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the proxy saw it, with wall-clock times (the emulator's clock is frozen). */
export interface ProxiedCall {
  /** 1-based arrival number. */
  n: number;
  body: string;
  arrivedAt: number;
  /** When the gateway's answer (or reset) came back; null while pending. */
  answeredAt: number | null;
  status: number | null;
  executionId: string | null;
  /** The answer was swallowed: the client never got it. */
  held: boolean;
}

export interface HoldProxy {
  url: string;
  calls: ProxiedCall[];
  close(): Promise<void>;
}

const FORWARDED_HEADERS = ['authorization', 'x-api-key', 'content-type', 'accept'];

export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Also reads a body cut off mid-JSON: the execution block comes before the result. */
function executionIdIn(text: string): string | null {
  return /"execution"\s*:\s*\{[^{}]*?"id"\s*:\s*"([^"]+)"/.exec(text)?.[1] ?? null;
}

export function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  return headers;
}

/**
 * Forwards every request to the gateway and logs it, except that the answers to the request
 * numbers in `hold` (1-based) are swallowed: the gateway did the work (and billed it, if it said
 * `succeeded`) while the client waits for its own timeout. A hung call as the client sees it,
 * with the worst truth behind it.
 */
export async function startHoldProxy(target: string, hold: ReadonlySet<number>): Promise<HoldProxy> {
  const calls: ProxiedCall[] = [];
  const relay = async (req: IncomingMessage, res: ServerResponse, call: ProxiedCall) => {
    const body = await readAll(req);
    call.body = body.toString('utf8');
    const answer = await fetch(`${target}${req.url ?? '/'}`, {
      method: req.method ?? 'POST',
      headers: forwardedHeaders(req),
      body: body.length > 0 ? body : undefined,
    });
    const text = await answer.text();
    Object.assign(call, { answeredAt: Date.now(), status: answer.status, executionId: executionIdIn(text) });
    if (call.held) return; // never answered: the client's timeout ends it
    const out: Record<string, string> = { 'content-type': answer.headers.get('content-type') ?? 'application/json' };
    const retryAfter = answer.headers.get('retry-after');
    if (retryAfter !== null) out['retry-after'] = retryAfter;
    res.writeHead(answer.status, out);
    res.end(text);
  };
  const server = createServer((req, res) => {
    const call: ProxiedCall = {
      n: calls.length + 1,
      body: '',
      arrivedAt: Date.now(),
      answeredAt: null,
      status: null,
      executionId: null,
      held: false,
    };
    call.held = hold.has(call.n);
    calls.push(call);
    relay(req, res, call).catch(() => {
      // A gateway that reset the connection is passed on as a reset.
      call.answeredAt ??= Date.now();
      res.socket?.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
