/**
 * Liveness, readiness and metrics for orchestrators and Prometheus. Plain node:http: three
 * read-only routes do not justify a framework.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { listen } from '../net-listen.js';

export const READY_TIMEOUT_MS = 2_000;

/** Resolves when the dependency answers; rejects (or hangs, cut off by the timeout) when not. */
export type ReadinessCheck = () => Promise<unknown>;

export interface HttpOptions {
  port: number;
  host?: string;
  registry: Registry;
  checks: Record<string, ReadinessCheck>;
  onError?: (err: unknown) => void;
}

export interface RunningHttp {
  port: number;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function runCheck(check: ReadinessCheck): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
  });
  const outcome = check().then(
    () => null,
    (e: unknown) => (e instanceof Error ? e.message : String(e)) || 'failed',
  );
  return Promise.race([outcome, timeout]).finally(() => clearTimeout(timer));
}

/** 200 when every check passes; 503 naming each failed one. */
export async function readiness(checks: Record<string, ReadinessCheck>): Promise<{ status: number; body: unknown }> {
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((n) => runCheck(checks[n]!)));
  const failed = Object.fromEntries(names.flatMap((n, i) => (results[i] === null ? [] : [[n, results[i]]])));
  const ok = Object.keys(failed).length === 0;
  const body = ok ? { status: 'ready', checks: Object.fromEntries(names.map((n) => [n, 'ok'])) } : { status: 'unavailable', failed };
  return { status: ok ? 200 : 503, body };
}

async function route(o: HttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' });
  if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
  if (path === '/readyz') {
    const r = await readiness(o.checks);
    return sendJson(res, r.status, r.body);
  }
  if (path === '/metrics') {
    const text = await o.registry.metrics();
    res.writeHead(200, { 'content-type': o.registry.contentType });
    res.end(text);
    return;
  }
  sendJson(res, 404, { error: 'not found', routes: ['/healthz', '/readyz', '/metrics'] });
}

/** Listens on `port` (0 picks a free port; the bound one is returned). */
export async function startHttpServer(o: HttpOptions): Promise<RunningHttp> {
  const server = createServer((req, res) => {
    route(o, req, res).catch((err: unknown) => {
      o.onError?.(err);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  server.on('error', (err) => o.onError?.(err));
  // Probes are short requests; keep-alive sockets would otherwise delay close() on shutdown.
  server.keepAliveTimeout = 1_000;
  const address = await listen(server, o.port, o.host ?? '0.0.0.0');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
