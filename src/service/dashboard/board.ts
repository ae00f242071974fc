/**
 * Bull Board (the BullMQ dashboard) under /queues. Without DASHBOARD_TOKEN it is read-only: every
 * queue is registered in Bull Board's readOnlyMode and every request that is not a read is refused
 * here before it reaches the board. With the token, only requests carrying it get through, and
 * then with the board's actions (retry, promote, clean, pause).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import express from 'express';
import { checkToken } from './auth.js';
import { html } from './html.js';

export const BOARD_PATH = '/queues';

export interface BoardOptions {
  queues: readonly Queue[];
  /** DASHBOARD_TOKEN; null: read-only and open. */
  token: string | null;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function underBoard(pathname: string): boolean {
  return pathname === BOARD_PATH || pathname.startsWith(`${BOARD_PATH}/`);
}

/**
 * Bull Board's page template without the web fonts it links from a public font service: an
 * operator's browser behind a closed network would call out for them (and wait). The board falls
 * back to the system's sans-serif. Written once per process to a folder of its own, removed at exit.
 */
let offlineViews: string | null = null;
function offlineViewsPath(): string {
  if (offlineViews !== null) return offlineViews;
  const ui = dirname(createRequire(import.meta.url).resolve('@bull-board/ui/package.json'));
  const page = readFileSync(join(ui, 'dist', 'index.ejs'), 'utf8').replace(/<link[^>]*\/\/fonts\.[^>]*>/g, '');
  const dir = mkdtempSync(join(tmpdir(), 'gi-board-views-'));
  writeFileSync(join(dir, 'index.ejs'), page);
  // Gone with the process: a folder left by every start would pile up over months of restarts.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  offlineViews = dir;
  return dir;
}

/** Everything the board loads comes from the service itself (its scripts, styles and images). */
export const BOARD_CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

function boardApp(o: BoardOptions): RequestHandler {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(BOARD_PATH);
  createBullBoard({
    queues: o.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: o.token === null })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'gateway-ingest', miscLinks: [{ text: 'Status page', url: '/' }] } },
  });
  adapter.setViewsPath(offlineViewsPath());
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.setHeader('content-security-policy', BOARD_CSP);
    next();
  });
  // Bull Board leaves its router untyped: it is an Express router.
  app.use(BOARD_PATH, adapter.getRouter() as express.Router);
  return (req, res) => void app(req, res);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

const isRead = (req: IncomingMessage): boolean => req.method === 'GET' || req.method === 'HEAD';

/** A person gets a form asking for the token; a script (or the board's API) gets JSON. */
function refuse(req: IncomingMessage, res: ServerResponse, url: URL): void {
  const challenge = { 'www-authenticate': 'Bearer realm="gateway-ingest dashboard"' };
  const wantsPage =
    isRead(req) && !url.pathname.startsWith(`${BOARD_PATH}/api/`) && (req.headers.accept ?? '').includes('text/html');
  if (!wantsPage)
    return sendJson(res, 401, { error: 'DASHBOARD_TOKEN required: send Authorization: Bearer <token>' }, challenge);
  res.writeHead(401, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...challenge });
  const bearer = html`<code>Authorization: Bearer &lt;token&gt;</code>`;
  const ask = html`<p>Enter <code>DASHBOARD_TOKEN</code> (a cookie keeps you signed in), or send ${bearer}.</p>`;
  const input = html`<input type="password" name="token" autocomplete="current-password" required autofocus>`;
  const form = html`<form method="get" action="${url.pathname}">${input} <button type="submit">Open</button></form>`;
  res.end(
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>gateway-ingest queues</title></head>
<body style="font:15px system-ui,sans-serif;margin:48px auto;max-width:520px">
<h1>Queues need the dashboard token</h1>${ask}
${form}
<p><a href="/">Status page</a> (no token needed)</p></body></html>`.text,
  );
}

/** The /queues handler: the token gate (or the read-only rule) in front of Bull Board. */
export function createBoard(o: BoardOptions): (req: IncomingMessage, res: ServerResponse, url: URL) => void {
  const board = boardApp(o);
  return (req, res, url) => {
    if (o.token === null) {
      if (isRead(req)) return board(req, res);
      return sendJson(
        res,
        405,
        { error: 'Bull Board is read-only: set DASHBOARD_TOKEN to allow its actions' },
        { allow: 'GET, HEAD' },
      );
    }
    const decision = checkToken(req, url, o.token, BOARD_PATH);
    if (decision.kind === 'allow') return board(req, res);
    if (decision.kind === 'deny') return refuse(req, res, url);
    res.writeHead(303, { location: decision.location, 'set-cookie': decision.cookie, 'cache-control': 'no-store' });
    res.end();
  };
}
