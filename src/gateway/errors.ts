/**
 * The audit's `error_kind` set, and how each kind maps to retry behaviour. Pure: classification
 * looks only at what one HTTP attempt produced.
 */
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

export function retryPolicyOf(kind: ErrorKind): RetryPolicy {
  if (kind === 'parameters' || kind === 'auth') return 'never';
  if (kind === 'rate_limited') return 'after_retry_after';
  return 'backoff';
}

/** One failed gateway attempt, carrying what the retry layer needs and the original cause. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: { httpStatus?: number | null; retryAfterMs?: number | null; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
  }
  get retryable(): boolean {
    return retryPolicyOf(this.kind) !== 'never';
  }
  get retryAfterMs(): number | null {
    return this.details.retryAfterMs ?? null;
  }
}

export interface AttemptFacts {
  /** null when no HTTP response arrived. */
  httpStatus: number | null;
  transportFailure?: 'timeout' | 'transport';
  /** `data.execution.outcome` if it could be read, verbatim. */
  outcome: string | null;
  /** The body was JSON and matched the envelope and result schema of the operation. */
  bodyValid: boolean;
}

/**
 * Outcome values other than `succeeded` are not given by the spec, so words in them are only a
 * hint; anything unrecognised falls back to the HTTP status and finally to `unknown`.
 */
function kindFromOutcomeWords(outcome: string): ErrorKind | null {
  const o = outcome.toLowerCase();
  if (/param|invalid|validation|bad.?request|rejected/.test(o)) return 'parameters';
  if (/auth|forbidden|denied|credential|not.?activated/.test(o)) return 'auth';
  if (/rate|throttl|quota|too.?many/.test(o)) return 'rate_limited';
  if (/source|upstream|provider|backend/.test(o)) return 'data_source';
  if (/unknown|indeterminate|timeout|timed.?out/.test(o)) return 'unknown';
  return null;
}

function kindFromStatus(status: number): ErrorKind | null {
  if (status === 401 || status === 402 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 400 && status < 500) return 'parameters';
  if (status >= 500) return 'server';
  return null;
}

/** null means the attempt succeeded: HTTP 2xx, outcome `succeeded` and a body that fits the spec. */
export function classifyAttempt(f: AttemptFacts): ErrorKind | null {
  if (f.transportFailure) return f.transportFailure;
  const status = f.httpStatus ?? 0;
  if (status === 401 || status === 403 || status === 429) return kindFromStatus(status);
  const ok2xx = status >= 200 && status < 300;
  if (f.outcome !== null && f.outcome !== 'succeeded') {
    return kindFromOutcomeWords(f.outcome) ?? (ok2xx ? 'unknown' : kindFromStatus(status)) ?? 'unknown';
  }
  if (!ok2xx) return kindFromStatus(status) ?? 'server';
  if (f.outcome === null || !f.bodyValid) return 'invalid_response';
  return null;
}

/** `Retry-After` is delta-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}
