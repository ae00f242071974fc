/**
 * Writes that must not be lost to a PostgreSQL outage: an answer already paid for is held in
 * memory and its transaction retried until the database is back (or the worker stops), instead
 * of being dropped and bought again. A transaction that lost to a concurrent one (a deadlock
 * between two answers holding the same events) is run again at once, the same way.
 */
import { isConnectionError, isTransientConflict } from '../errors.js';
import type { Log } from '../log.js';
import type { JobContext } from './deps.js';

/** How long an answer is held for a database that does not answer. */
export const HOLD_ANSWER_MS = 15 * 60_000;

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
      if (isTransientConflict(e) && !ctx.signal?.aborted && Date.now() < until) {
        log.warn('write lost to a concurrent one (deadlock or serialization failure): running it again');
        // A moment apart, so that the two writes do not meet again in step.
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
        continue;
      }
      if (!isConnectionError(e) || Date.now() + delay > until || ctx.signal?.aborted) throw e;
      log.warn(
        { err: (e as Error).message, retryInMs: delay },
        'database unreachable: holding the answer and retrying',
      );
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
