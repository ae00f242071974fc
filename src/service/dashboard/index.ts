/**
 * The service's human-facing routes: the status page at `/` (always open, read-only) and Bull
 * Board under /queues (read-only, or behind DASHBOARD_TOKEN).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';
import type { HttpRoutes } from '../http.js';
import { BOARD_PATH, createBoard, underBoard } from './board.js';
import { renderUnavailablePage } from './page.js';
import { statusPageHtml, type StatusSources } from './status.js';

export interface DashboardOptions extends StatusSources {
  queues: readonly Queue[];
  /** DASHBOARD_TOKEN; null leaves Bull Board open but read-only. */
  token: string | null;
  onError?: (err: unknown) => void;
}

/** No script runs on the page; inline styles are its only non-markup content. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

async function servePage(o: DashboardOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    return void res.end('method not allowed\n');
  }
  let status = 200;
  let body: string;
  try {
    body = await statusPageHtml(o);
  } catch (err) {
    // The page is what an operator opens when something is wrong: say what, rather than a bare 500.
    o.onError?.(err);
    status = 503;
    body = renderUnavailablePage(err instanceof Error ? err.message : String(err));
  }
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': PAGE_CSP,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function createDashboard(o: DashboardOptions): HttpRoutes {
  const board = createBoard({ queues: o.queues, token: o.token });
  return {
    paths: ['/', BOARD_PATH],
    async handle(req, res, url) {
      if (url.pathname === '/') {
        await servePage(o, req, res);
        return true;
      }
      if (!underBoard(url.pathname)) return false;
      board(req, res, url);
      return true;
    },
  };
}
