import { recordFailedAttempt, type CallContext } from '../db/writes/audit.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import { attemptError } from '../gateway/client.js';
import type { GatewayError } from '../gateway/errors.js';
import type { ProcessorDeps } from './deps.js';

/**
 * A failed attempt is audited and observed like any call, then turned into the error the retry
 * layer acts on. Returns it for the caller to throw, so control flow stays visible there.
 */
export async function failedAttempt(
  deps: ProcessorDeps,
  record: AttemptRecord,
  cause: unknown,
  call: CallContext,
  logFields: Record<string, unknown>,
): Promise<GatewayError> {
  await recordFailedAttempt(deps.db, record, call);
  deps.observer?.onCall(record, 0);
  const { outcome, errorKind, httpStatus, durationMs } = record;
  deps.log.warn({ ...logFields, outcome, errorKind, httpStatus, durationMs }, 'gateway call failed');
  return attemptError(record, cause);
}
