/**
 * Every error class the product throws on purpose, in one leaf module; every layer may raise them,
 * and only the CLI maps them to exit codes (cli/exit.ts). Also how every layer tells an outage of
 * our own services from any other error (`isConnectionError`).
 */

/** Bad flags, bad config or bad input: exit 2, and nothing was changed. */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

/** An environment variable that does not parse: exit 2, naming the variable. */
export class ConfigError extends UsageError {
  override readonly name = 'ConfigError';
}

/** A service (PostgreSQL, Redis, the gateway) could not be reached: exit 1 with how to fix it. */
export class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
}

/** The audit's `error_kind` set; each kind maps to one retry behaviour (`retryPolicyOf`). */
export const ERROR_KINDS = [
  'parameters',
  'auth',
  'rate_limited',
  'data_source',
  'unknown',
  'server',
  'timeout',
  'transport',
  'invalid_response',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export type RetryPolicy = 'never' | 'after_retry_after' | 'backoff';

/** Parameter and auth errors are unrecoverable, 429 waits for Retry-After, the rest backs off. */
export function retryPolicyOf(kind: ErrorKind): RetryPolicy {
  if (kind === 'parameters' || kind === 'auth') return 'never';
  if (kind === 'rate_limited') return 'after_retry_after';
  return 'backoff';
}

/** Answers saying the gateway failed, none of them billed; a 429 here is one without a Retry-After. */
const GATEWAY_AWAY_KINDS: ReadonlySet<ErrorKind> = new Set(['server', 'data_source', 'unknown', 'rate_limited']);

/** One failed gateway attempt, carrying what the retry layer needs and the original cause. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: {
      httpStatus?: number | null;
      retryAfterMs?: number | null;
      cause?: unknown;
      failuresInRow?: number;
      /** How long the partition has been failing, since its last recorded answer (ms). */
      failingForMs?: number;
      /** A refusal the gateway's clock alone may explain (gateway/classify.ts `clockBound`): asked again later. */
      clockBound?: boolean;
      /** A timeout after which a request every gateway refuses got no answer either: nothing is answering. */
      gatewaySilent?: boolean;
      /** A refusal that names nothing wrong with the request (gateway/classify.ts `doubtfulRefusal`): retried. */
      doubtfulRefusal?: boolean;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
  get retryable(): boolean {
    const doubtful = this.details.clockBound === true || this.details.doubtfulRefusal === true;
    return retryPolicyOf(this.kind) !== 'never' || doubtful;
  }
  get retryAfterMs(): number | null {
    return this.details.retryAfterMs ?? null;
  }
  /** Failed attempts of the partition since its last recorded answer, this one included (0: not counted). */
  get failuresInRow(): number {
    return this.details.failuresInRow ?? 0;
  }
  /**
   * The gateway away: no connection or none answered (refused, reset before a byte came), a 5xx, its
   * data source failing, a result it calls unknown, or a 429 that says not when to come back. Nothing
   * says the request is wrong, none of these is billed, and waiting is what fixes them. Not an answer
   * cut midway, nor a timeout while the gateway answers other requests: the gateway may have billed
   * the answer that did not arrive. A timeout is, once a liveness probe got no answer either.
   */
  get gatewayAway(): boolean {
    const unanswered = this.kind === 'transport' && (this.details.httpStatus ?? null) === null;
    const silent = this.kind === 'timeout' && this.details.gatewaySilent === true;
    return unanswered || silent || GATEWAY_AWAY_KINDS.has(this.kind);
  }
}

/** The worker is stopping: the job goes back to the queue as it is, nothing counted against it. */
export class ShutdownError extends Error {
  override readonly name = 'ShutdownError';
}

/** The work cannot be finished by retrying (a window past its call ceiling): fail it with the reason. */
export class GaveUpError extends Error {
  override readonly name = 'GaveUpError';
}

/**
 * A billed-call budget is used up, so no call was started: the job waits, it has not failed.
 * `scope` says which cap: `day` (BILLED_CALLS_PER_DAY, until the next UTC midnight) or `backfill`
 * (its --max-billed-calls, until the cap is raised: `until` null).
 */
export class BudgetExhaustedError extends Error {
  override readonly name = 'BudgetExhaustedError';
  constructor(
    readonly scope: 'day' | 'backfill',
    readonly cap: number,
    readonly until: Date | null,
    readonly backfillId: string | null,
  ) {
    super(
      scope === 'day'
        ? `BILLED_CALLS_PER_DAY (${cap}) used up: paused until ${until?.toISOString() ?? 'the next UTC day'}`
        : `backfill ${backfillId ?? '?'} used its ${cap} billed calls: paused until --max-billed-calls is raised`,
    );
  }
}

/** The job's backfill was paused: the job stops before its next call and is dropped (resume re-adds it). */
export class BackfillPausedError extends Error {
  override readonly name = 'BackfillPausedError';
  constructor(readonly backfillId: string) {
    super(`backfill ${backfillId} is paused: no new gateway call`);
  }
}

/** The job's backfill was cancelled: the job stops before its next call and its partition is marked cancelled. */
export class BackfillCancelledError extends Error {
  override readonly name = 'BackfillCancelledError';
  constructor(readonly backfillId: string) {
    super(`backfill ${backfillId} was cancelled`);
  }
}

/** Another live worker run is reading the partition: this copy of its job waits (nothing is wrong). */
export class PartitionBusyError extends Error {
  constructor(readonly partition: { streamKey: string; partitionKey: string }) {
    super(`${partition.streamKey} ${partition.partitionKey} is being read by another worker run`);
    this.name = 'PartitionBusyError';
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  // A network partition, and a DNS server that does not answer for now.
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  // Read-only: a failover in progress, this connection on the old primary become a standby. Waited
  // out until the pool's connections are replaced (MAX_CONNECTION_LIFETIME_MS in db/connection.ts).
  '25006',
]);

const CONNECTION_MESSAGE = new RegExp(
  'Connection terminated|connection silent|cut off by shutdown|timeout exceeded when trying to connect|' +
    'connect ECONNREFUSED|Client has encountered a connection error|terminating connection|' +
    // Redis in a failover: a primary demoted to a replica.
    "^READONLY You can't write|^UNBLOCKED force unblock",
  'i',
);

/**
 * Our own PostgreSQL or Redis is unreachable, restarting, silent or out of resources (not: the
 * statement is wrong), from the driver's code or message, or the cause it wraps. Such an outage is
 * waited out, never counted against the work.
 */
export function isConnectionError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  // Class 08 is a connection exception; class 53, insufficient resources (too many connections, disk
  // full, out of memory): the server is there but cannot take the work now, which only waiting fixes.
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^(08|53)/.test(code))) return true;
  if (e.cause !== undefined && e.cause !== e && isConnectionError(e.cause)) return true;
  return CONNECTION_MESSAGE.test(e.message) || isRedisOutOfMemory(e);
}

/**
 * Redis at its maxmemory under noeviction (as BullMQ needs): every write is refused until memory is
 * freed or maxmemory raised, an outage like any other.
 */
export function isRedisOutOfMemory(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith('OOM command not allowed');
}

/** PostgreSQL's codes for a transaction that lost to a concurrent one: deadlock, serialization failure. */
const CONFLICT_CODES = new Set(['40P01', '40001']);

/**
 * The statement lost to a concurrent transaction (PostgreSQL aborted it to break a deadlock, or
 * to keep serializability): nothing is wrong with it, and PostgreSQL's own advice is to run it again.
 */
export function isTransientConflict(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && CONFLICT_CODES.has(code)) return true;
  return e.cause !== undefined && e.cause !== e && isTransientConflict(e.cause);
}

/**
 * The PostgreSQL error an error is or wraps (drizzle's "Failed query" holds the server's in its
 * cause): its SQLSTATE and message, or null.
 */
export function postgresRefusal(e: unknown): { code: string; message: string } | null {
  for (let at = e, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const { code, severity } = at as { code?: unknown; severity?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string')
      return { code, message: at.message };
  }
  return null;
}
