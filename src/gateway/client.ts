import { Agent, request, errors as undiciErrors } from 'undici';
import * as z from 'zod';
import { NO_ANSWER, type Attempt, type AttemptRecord } from './attempt.js';
import { readAnswer, type EmptyMatch } from './answer.js';
import { doubtfulRefusal, refusedByClock } from './classify.js';
import { MAX_BODY_BYTES, readBody, type BodyRead } from './body.js';
import {
  EMPTY_EARTHQUAKE_MATCH,
  earthquakeRequestSchema,
  earthquakeResultFor,
  indicatorRequestSchema,
  indicatorResultSchema,
  type EarthquakeRequest,
  type EarthquakeResult,
  type IndicatorRequest,
  type IndicatorResult,
} from './schemas.js';
import { isBilled, LIMITS, OPERATIONS, type Operation } from '../domain/spec.js';
import { GatewayError } from '../errors.js';

export interface GatewayConfig {
  baseUrl: string;
  key: string;
  authHeader: 'authorization' | 'x-api-key';
  timeoutMs: number;
}

/** The port processors depend on; tests and the CLI pass the undici implementation. */
export interface Gateway {
  readonly baseUrl: string;
  queryEarthquakes(req: EarthquakeRequest, signal?: AbortSignal): Promise<Attempt<EarthquakeResult>>;
  queryIndicator(req: IndicatorRequest, signal?: AbortSignal): Promise<Attempt<IndicatorResult>>;
  /**
   * Sends `LIVENESS_REQUESTS[operation]`, which the spec has every gateway refuse, within the deadline
   * the next query would have: an HTTP answer of whatever kind says the gateway is there. Its timeout
   * lengthens the next deadlines as a query's does; its answer shortens none.
   */
  probeLiveness(operation: Operation, signal?: AbortSignal): Promise<Attempt<unknown>>;
  close(): Promise<void>;
}

/**
 * Requests the spec says fail on parameters, so never billed (part 1.7): an earthquake window ending
 * where it starts ("end_time must be after start_time"), indicator years before 1960. Whether such a
 * request gets an answer tells a gateway that is not answering at all from one too slow for a query.
 */
export const LIVENESS_REQUESTS: Readonly<Record<Operation, Readonly<Record<string, unknown>>>> = {
  earthquake: {
    provider: OPERATIONS.earthquake.provider,
    start_time: '2000-01-01T00:00:00Z',
    end_time: '2000-01-01T00:00:00Z',
    max_results: 1,
  },
  indicator: {
    provider: OPERATIONS.indicator.provider,
    country: 'WLD',
    indicator: 'SP.POP.TOTL',
    start_year: LIMITS.firstYear - 1,
    end_year: LIMITS.firstYear - 1,
  },
};

/**
 * A request cut off while waiting for the answer is a `timeout` (the gateway may have billed what it
 * was computing); a connection never made, refused or timed out before it was open, is `transport`:
 * nothing was sent, so nothing can have been billed, and the gateway is away (errors.ts).
 */
export function transportKind(error: unknown): 'timeout' | 'transport' {
  if (error instanceof undiciErrors.ConnectTimeoutError) return 'transport';
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
  ) {
    return 'timeout';
  }
  return 'transport';
}

/**
 * Failures to make a connection at all: the request was never written, so nothing can have been
 * billed. A TLS handshake refused (a certificate not trusted, plain HTTP on the port) comes before
 * the request too.
 */
const UNSENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);

/** Whether a request failed before a connection carried it (not: a connection reset or closed after it was sent). */
export function neverSent(error: unknown): boolean {
  if (error instanceof undiciErrors.ConnectTimeoutError) return true;
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && UNSENT_CODES.has(code);
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.name}${typeof code === 'string' ? ` ${code}` : ''}: ${error.message}${cause}`;
}

/** Below this length a key is not looked for in answers (see `#redacted`); real keys are far longer. */
const MIN_REDACTED_KEY_LENGTH = 8;

export class UndiciGateway implements Gateway {
  readonly baseUrl: string;
  readonly #config: GatewayConfig;
  /** Calls in a row that timed out, across the process: the next ones wait longer (`#timeoutMs`). */
  #timeoutsInRow = 0;
  /** How long the gateway's answers take now (`#count`). */
  #answerMs = 0;
  readonly #agent: Agent;
  readonly #now: () => Date;
  // Built once: a zod schema compiles itself on its first parse, so one per call would compile per call.
  readonly #earthquakeRequest: ReturnType<typeof earthquakeRequestSchema>;
  readonly #indicatorRequest: ReturnType<typeof indicatorRequestSchema>;

  constructor(config: GatewayConfig, now: () => Date = () => new Date()) {
    this.#config = config;
    this.baseUrl = config.baseUrl.replace(/\/+$/, '');
    this.#now = now;
    this.#earthquakeRequest = earthquakeRequestSchema(now);
    this.#indicatorRequest = indicatorRequestSchema(now);
    this.#agent = new Agent({
      connections: 32,
      keepAliveTimeout: 10_000,
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
      connectTimeout: Math.min(config.timeoutMs, 10_000),
      maxResponseSize: MAX_BODY_BYTES,
    });
  }

  queryEarthquakes(req: EarthquakeRequest, signal?: AbortSignal): Promise<Attempt<EarthquakeResult>> {
    return this.#call(
      'earthquake',
      this.#earthquakeRequest,
      earthquakeResultFor(req),
      req,
      signal,
      EMPTY_EARTHQUAKE_MATCH,
    );
  }

  queryIndicator(req: IndicatorRequest, signal?: AbortSignal): Promise<Attempt<IndicatorResult>> {
    return this.#call('indicator', this.#indicatorRequest, indicatorResultSchema, req, signal);
  }

  async probeLiveness(operation: Operation, signal?: AbortSignal): Promise<Attempt<unknown>> {
    // Waited for as long as a query would be now, and a probe timed out lengthens the next deadlines
    // as a query's timeout does: a gateway slower than the setting for every request (within four
    // times it) is then slow, not silent, and its queries still go. Its answer shortens nothing: a
    // refusal's speed says nothing of how long a query takes.
    const deadlineMs = this.#timeoutMs();
    const attempt = await this.#send(operation, LIVENESS_REQUESTS[operation], z.unknown(), deadlineMs, signal, null);
    if (attempt.record.errorKind === 'timeout') this.#timeoutsInRow++;
    return attempt;
  }

  close(): Promise<void> {
    return this.#agent.close();
  }

  #headers(): Record<string, string> {
    const { authHeader, key } = this.#config;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate, br',
    };
    if (authHeader === 'authorization') headers.authorization = `Bearer ${key}`;
    else headers['x-api-key'] = key;
    return headers;
  }

  /** No transport error is known to echo a header, but the audit must never hold the key even if one does. */
  #withoutKey(text: string): string {
    return this.#config.key === '' ? text : text.split(this.#config.key).join('***');
  }

  /**
   * A gateway may echo the credential it was sent (a refusal quoting the header, an id built from
   * it): what the audit and logs keep of an answer never holds it. `succeeded` is left as it is, so
   * that no key, however short, can change what the answer says.
   */
  #redacted(record: AttemptRecord): AttemptRecord {
    // A key this short would be found inside ordinary words ('k' in 'asked'), mangling what the audit says.
    if (this.#config.key.length < MIN_REDACTED_KEY_LENGTH) return record;
    const clean = (t: string | null) => (t === null ? null : this.#withoutKey(t));
    return {
      ...record,
      message: clean(record.message),
      outcome: record.outcome === 'succeeded' ? record.outcome : clean(record.outcome),
      executionId: clean(record.executionId),
      invocationId: clean(record.invocationId),
      errorDetail: clean(record.errorDetail),
    };
  }

  /** A request that breaks the spec is refused here, never sent and never billed. */
  #validate<Q>(operation: Operation, schema: z.ZodType<Q>, req: unknown): Q {
    const parsed = schema.safeParse(req);
    if (parsed.success) return parsed.data;
    const why = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new GatewayError('parameters', `refused to send an invalid ${operation} request: ${why}`, {
      cause: parsed.error,
    });
  }

  /**
   * GATEWAY_TIMEOUT_MS, doubled after a call timed out and again after two in a row, and twice what
   * recent answers took: a gateway slower than the setting (a busy hour, a large answer) still
   * answers, and from its first answer on is waited for, where every other call cut off at the
   * setting would be billed and asked again. Still a deadline, four times the setting at most.
   */
  #timeoutMs(): number {
    const settingMs = this.#config.timeoutMs;
    const afterTimeoutsMs = settingMs * 2 ** Math.min(this.#timeoutsInRow, 2);
    // Whole milliseconds: AbortSignal.timeout throws a RangeError on a fraction.
    return Math.ceil(Math.max(afterTimeoutsMs, Math.min(4 * settingMs, 2 * this.#answerMs)));
  }

  /**
   * A timeout lengthens the next deadline; every answer, even a refusal, ends the run of timeouts and
   * says how long the gateway takes now (the slowest recent answer, halved by each faster one).
   */
  #count(record: AttemptRecord): void {
    if (record.errorKind === 'timeout') this.#timeoutsInRow++;
    else if (record.httpStatus !== null) {
      this.#timeoutsInRow = 0;
      this.#answerMs = Math.max(record.durationMs, this.#answerMs / 2);
    }
  }

  /**
   * A body that stopped midway is a transport failure, whatever arrived of it: what it began with
   * is audited (the execution says whether the gateway billed it), nothing of it is stored.
   */
  #cutOff(got: BodyRead, signal?: AbortSignal): { kind: 'timeout' | 'transport'; detail: string } {
    const kind = signal?.aborted ? 'transport' : transportKind(got.error);
    const why = this.#withoutKey(errorText(got.error));
    return { kind, detail: `the answer stopped after ${got.text.length} characters: ${why}` };
  }

  async #call<Q extends object, R extends z.ZodType>(
    operation: Operation,
    requestSchema: z.ZodType<Q>,
    resultSchema: R,
    req: Q,
    signal?: AbortSignal,
    empty: EmptyMatch<z.infer<R>> | null = null,
  ): Promise<Attempt<z.infer<R>>> {
    const body = this.#validate(operation, requestSchema, req);
    const attempt = await this.#send(operation, body, resultSchema, this.#timeoutMs(), signal, empty);
    this.#count(attempt.record);
    return attempt;
  }

  async #send<R extends z.ZodType>(
    operation: Operation,
    body: object,
    resultSchema: R,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    empty: EmptyMatch<z.infer<R>> | null,
  ): Promise<Attempt<z.infer<R>>> {
    const startedAt = this.#now();
    const t0 = performance.now();
    const base = { operation, request: { ...body } as Record<string, unknown>, startedAt };
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const path = OPERATIONS[operation].path;
      const res = await request(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: this.#headers(),
        body: JSON.stringify(body),
        dispatcher: this.#agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const got = await readBody(res.body, res.headers['content-encoding']);
      const retryAfter = res.headers['retry-after'];
      const read = readAnswer(
        resultSchema,
        res.statusCode,
        typeof retryAfter === 'string' ? retryAfter : null,
        got.text,
        Date.now(),
        path,
        empty,
      );
      const cut = got.error === null ? null : this.#cutOff(got, signal);
      const redirect = redirectProblem(read, res.headers.location);
      const record: AttemptRecord = {
        ...base,
        httpStatus: read.httpStatus,
        code: read.code,
        message: read.message,
        outcome: read.outcome,
        billed: isBilled(read.outcome),
        units: read.units,
        executionId: read.executionId,
        invocationId: read.invocationId,
        errorKind: cut?.kind ?? read.kind,
        errorDetail: cut?.detail ?? (redirect === null ? read.problem : this.#withoutKey(redirect)),
        retryAfterMs: read.retryAfterMs,
        finishedAt: this.#now(),
        durationMs: Math.round(performance.now() - t0),
      };
      if (cut !== null) return { ok: false, record: this.#redacted(record), cause: got.error };
      if (read.kind === null && read.result !== null)
        return { ok: true, record: this.#redacted(record), result: read.result };
      return { ok: false, record: this.#redacted(record), cause: null };
    } catch (cause) {
      const kind = signal?.aborted ? 'transport' : transportKind(cause);
      const record: AttemptRecord = {
        ...(neverSent(cause) && { unsent: true }),
        ...base,
        ...NO_ANSWER,
        errorKind: kind,
        errorDetail: this.#withoutKey(errorText(cause)),
        finishedAt: this.#now(),
        durationMs: Math.round(performance.now() - t0),
      };
      return { ok: false, record, cause };
    }
  }
}

/**
 * A redirect is not followed: the key would go wherever it points. The operator moves
 * GATEWAY_BASE_URL instead, told where to.
 */
function redirectProblem(read: { httpStatus: number; kind: unknown }, location: unknown): string | null {
  if (read.kind === null || read.httpStatus < 300 || read.httpStatus >= 400) return null;
  const to = typeof location === 'string' ? ` to ${location}` : '';
  return (
    `the gateway answered ${read.httpStatus}, a redirect${to}: redirects are not followed, so that the key ` +
    'goes nowhere else; if the gateway has moved, set GATEWAY_BASE_URL to its new address'
  );
}

/** Turns a failed attempt into the error the retry layer acts on, keeping the cause. */
export function attemptError(record: AttemptRecord, cause: unknown): GatewayError {
  const kind = record.errorKind ?? 'unknown';
  const status = record.httpStatus === null ? 'no response' : `HTTP ${record.httpStatus}`;
  const outcome = record.outcome ? `, outcome ${record.outcome}` : '';
  const clock = refusedByClock(record);
  const doubtful = !clock && doubtfulRefusal(record);
  const later = clock
    ? "; the gateway's clock may be behind ours on this request, so it is asked again later"
    : doubtful
      ? '; it names nothing wrong with the request (a failure elsewhere sent as a 4xx?), so it is asked again'
      : '';
  return new GatewayError(
    kind,
    `${record.operation} call failed (${kind}, ${status}${outcome}): ${record.errorDetail ?? 'no detail'}${later}`,
    {
      httpStatus: record.httpStatus,
      retryAfterMs: record.retryAfterMs,
      cause,
      clockBound: clock,
      doubtfulRefusal: doubtful,
    },
  );
}
