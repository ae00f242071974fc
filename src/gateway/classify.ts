/**
 * Pure classification of one HTTP attempt into the audit's error kinds (see errors.ts for how
 * each kind is retried), and the Retry-After header.
 */
import type { Operation } from '../domain/spec.js';
import type { AttemptRecord } from './attempt.js';
import { currentYearEverywhere, GATEWAY_CLOCK_SLACK_MS, parseRfc3339 } from '../domain/time.js';
import type { ErrorKind } from '../errors.js';

export interface AttemptFacts {
  /** null when no HTTP response arrived. */
  httpStatus: number | null;
  transportFailure?: 'timeout' | 'transport';
  /** `data.execution.outcome` if it could be read, verbatim. */
  outcome: string | null;
  /** The body was JSON and matched the envelope and result schema of the operation. */
  bodyValid: boolean;
  /** The envelope's `message`, if any: a hint where the status alone would end the work. */
  message?: string | null;
}

/**
 * Outcome values other than `succeeded` are not given by the spec, so words in them are only a
 * hint; anything unrecognised falls back to the HTTP status and finally to `unknown`.
 */
function kindFromOutcomeWords(outcome: string): ErrorKind | null {
  const o = outcome.toLowerCase();
  // Retryable kinds first: a word that also hints at bad input ("upstream invalid response") must
  // not fail a window for good, and a wrong `parameters` costs the window while a wrong retry
  // costs unbilled calls.
  if (/source|upstream|provider|backend/.test(o)) return 'data_source';
  if (/unknown|indeterminate|timeout|timed.?out/.test(o)) return 'unknown';
  if (/rate|throttl|quota|too.?many/.test(o)) return 'rate_limited';
  if (/auth|forbidden|denied|credential|not.?activated/.test(o)) return 'auth';
  if (/param|argument|validation|bad.?request|invalid.?(request|input|field|value)/.test(o)) return 'parameters';
  return null;
}

/**
 * What a message says of a failure that time may fix, stricter than the outcome's words: a message
 * about bad input names fields (`provider`, `start_time`) that looser words would match.
 */
function transientFromMessage(message: string | null | undefined): ErrorKind | null {
  const m = (message ?? '').toLowerCase();
  if (/\b(upstream|data ?source|backend)\b/.test(m)) return 'data_source';
  if (/\b(rate.?limit|throttl|quota|too many requests)/.test(m)) return 'rate_limited';
  if (/\b(timed? ?out|temporar|unavailable|try again)/.test(m)) return 'unknown';
  return null;
}

/**
 * The spec shows no HTTP status for any failure, so a 4xx may carry a failure of the data source:
 * where its message says so, it is retried (unbilled) rather than ending the work. A 404 names a
 * wrong path, whatever it says.
 */
function kindFromStatusAndMessage(status: number, message: string | null | undefined): ErrorKind | null {
  const kind = kindFromStatus(status);
  return kind === 'parameters' && status !== 404 ? (transientFromMessage(message) ?? kind) : kind;
}

function kindFromStatus(status: number): ErrorKind | null {
  // A redirect is not followed (the key would go where it points). A permanent one says the base URL
  // is to be changed; a temporary one (maintenance, say) is asked again like a server error.
  if (status === 301 || status === 308) return 'parameters';
  if (status === 401 || status === 402 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status === 504) return 'timeout';
  // 404 is a wrong GATEWAY_BASE_URL or path: no retry fixes it (answer.ts says so in its message).
  if (status === 404) return 'parameters';
  if (status >= 400 && status < 500) return 'parameters';
  if (status >= 500) return 'server';
  return null;
}

/**
 * null means the attempt succeeded: outcome `succeeded` and a body that fits the spec. The spec
 * calls that execution success and bills it, whatever the HTTP status (it shows none): an answer
 * read as failed for its status would be asked again and billed again.
 */
export function classifyAttempt(f: AttemptFacts): ErrorKind | null {
  if (f.transportFailure) return f.transportFailure;
  if (f.outcome === 'succeeded' && f.bodyValid) return null;
  const status = f.httpStatus ?? 0;
  if (status === 401 || status === 403 || status === 429) return kindFromStatus(status);
  const ok2xx = status >= 200 && status < 300;
  if (f.outcome !== null && f.outcome !== 'succeeded') {
    return (
      kindFromOutcomeWords(f.outcome) ?? (ok2xx ? 'unknown' : kindFromStatusAndMessage(status, f.message)) ?? 'unknown'
    );
  }
  if (!ok2xx) return kindFromStatusAndMessage(status, f.message) ?? 'server';
  return 'invalid_response';
}

/** `Retry-After` is delta-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * A request whose refusal the gateway's clock alone may explain: an earthquake query starting
 * within GATEWAY_CLOCK_SLACK_MS of `sentAtMs` ("not in the future" on a clock behind ours), or an
 * indicator query ending in a year not every time zone has reached ("not after the current year").
 * Such a refusal costs nothing (parameter errors are not billed) and time fixes it.
 */
export function clockBound(operation: Operation, request: Record<string, unknown>, sentAtMs: number): boolean {
  if (operation === 'earthquake') {
    const start = typeof request.start_time === 'string' ? parseRfc3339(request.start_time) : null;
    return start !== null && start > sentAtMs - GATEWAY_CLOCK_SLACK_MS;
  }
  return typeof request.end_year === 'number' && request.end_year > currentYearEverywhere(sentAtMs);
}

/** Statuses that refuse the request whatever it holds: no operation there, or not this way. */
const DEFINITE_REFUSALS = new Set([404, 405, 410, 415]);

/** Words of a refusal that says what is wrong with the request. */
const BAD_INPUT_WORDS =
  /param|argument|validat|\binvalid|malformed|\bmust\b|required|not allowed|unsupported|out of range|\bexpected|too (large|small|long|short|many|few)|exceed/;

/** The request fields of each operation (spec 4.1, 4.2): a message naming one says what was refused. */
const REQUEST_FIELDS: Readonly<Record<Operation, readonly string[]>> = {
  earthquake: [
    'provider',
    'start_time',
    'end_time',
    'min_magnitude',
    'latitude',
    'longitude',
    'radius_km',
    'max_results',
  ],
  indicator: ['provider', 'country', 'indicator', 'start_year', 'end_year'],
};

/**
 * A `parameters` failure that says nothing of what is wrong: a 4xx with no outcome naming bad
 * input and no message naming a request field or what is wrong with one. The spec shows no status
 * for a failure, so such an answer may be a data source failure or an unknown result sent as a
 * 4xx; a refusal is never billed, so it is asked again like those (counted among the failures in a
 * row) rather than ending the work at once. A refusal that does say what is wrong ends it.
 */
export function doubtfulRefusal(record: AttemptRecord): boolean {
  const status = record.httpStatus;
  if (record.errorKind !== 'parameters' || status === null || status < 400) return false;
  if (DEFINITE_REFUSALS.has(status)) return false;
  if (record.outcome !== null && kindFromOutcomeWords(record.outcome) === 'parameters') return false;
  const said = `${record.outcome ?? ''} ${record.message ?? ''}`.toLowerCase();
  return !BAD_INPUT_WORDS.test(said) && !REQUEST_FIELDS[record.operation].some((f) => said.includes(f));
}

/**
 * A failed attempt the gateway's clock alone may explain: a parameter error (not a 404, which names
 * a wrong base URL or path) of a request `clockBound` holds. Asked again later, and not counted
 * among the partition's failures in a row: time, not the request, is what fixes it.
 */
export function refusedByClock(record: AttemptRecord): boolean {
  return (
    record.errorKind === 'parameters' &&
    record.httpStatus !== 404 &&
    clockBound(record.operation, record.request, record.startedAt.getTime())
  );
}
