/**
 * Writes that must not be lost to a PostgreSQL outage: an answer already paid for is held in
 * memory and its transaction retried until the database is back (or the worker stops), instead
 * of being dropped and bought again.
 */
import type { Log } from '../log.js';
import type { JobContext } from './deps.js';

/** How long an answer is held for a database that does not answer. */
export const HOLD_ANSWER_MS = 15 * 60_000;

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
]);

/** The database is unreachable or restarting (not: the statement is wrong). */
export function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  if (e.cause !== undefined && e.cause !== e && isConnectionError(e.cause)) return true;
  return /Connection terminated|connection silent|cut off by shutdown|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error|terminating connection/i.test(
    e.message,
  );
}

export async function durable<T>(
  write: () => Promise<T>,
  ctx: Pick<JobContext, 'signal' | 'stopping'>,
  log: Log,
  holdMs = HOLD_ANSWER_MS,
): Promise<T> {
  const until = Date.now() + holdMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await write();
    } catch (e) {
      if (!isConnectionError(e) || Date.now() + delay > until || ctx.signal?.aborted) throw e;
      log.warn(
        { err: (e as Error).message, retryInMs: delay },
        'database unreachable: holding the answer and retrying',
      );
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
