/**
 * Liveness, readiness and metrics for orchestrators and Prometheus. Plain node:http: three
 * read-only routes do not justify a framework; the dashboard plugs its own routes in (`routes`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { ServiceUnavailableError } from '../errors.js';
import { listen } from '../net-listen.js';

export const READY_TIMEOUT_MS = 2_000;

/** Resolves when the dependency answers; rejects (or hangs, cut off by the timeout) when not. */
export type ReadinessCheck = () => Promise<unknown>;

export interface HttpOptions {
  port: number;
  host?: string;
  registry: Registry;
  checks: Record<string, ReadinessCheck>;
  /** More routes, asked first (the dashboard). */
  routes?: HttpRoutes;
  onError?: (err: unknown) => void;
}

export interface HttpRoutes {
  /** Listed in the 404 answer. */
  paths: readonly string[];
  /** Serves the request and resolves true, or resolves false to leave it to the built-in routes. */
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>;
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
  const body = ok
    ? { status: 'ready', checks: Object.fromEntries(names.map((n) => [n, 'ok'])) }
    : { status: 'unavailable', failed };
  return { status: ok ? 200 : 503, body };
}

async function route(o: HttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (o.routes && (await o.routes.handle(req, res, url))) return;
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
  sendJson(res, 404, { error: 'not found', routes: ['/healthz', '/readyz', '/metrics', ...(o.routes?.paths ?? [])] });
}

/** What an operator can act on, without a stack: the port is named as the variable that sets it. */
function listenError(err: unknown, port: number): unknown {
  const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  if (code === 'EADDRINUSE')
    return new ServiceUnavailableError(`HTTP_PORT ${port} is already in use (EADDRINUSE): choose another port`, {
      cause: err,
    });
  if (code === 'EACCES')
    return new ServiceUnavailableError(
      `HTTP_PORT ${port} may not be opened by this user (EACCES): choose a port above 1023`,
      { cause: err },
    );
  return err;
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
  // Probes are short requests; keep-alive sockets would otherwise delay close() on shutdown.
  server.keepAliveTimeout = 1_000;
  const address = await listen(server, o.port, o.host ?? '0.0.0.0').catch((err: unknown) => {
    throw listenError(err, o.port);
  });
  // Only now: a failed listen is the caller's error to report, not a logged endpoint error.
  server.on('error', (err) => o.onError?.(err));
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
