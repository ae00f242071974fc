import { describe, expect, it } from 'vitest';
import { readAnswer, salvageExecution } from '../../src/gateway/answer.js';
import {
  EMPTY_EARTHQUAKE_MATCH,
  earthquakeResultFor,
  earthquakeResultSchema,
  indicatorResultSchema,
} from '../../src/gateway/schemas.js';
import { classifyAttempt, clockBound, doubtfulRefusal, parseRetryAfterMs } from '../../src/gateway/classify.js';
import { errors as undiciErrors } from 'undici';
import { attemptError, LIVENESS_REQUESTS, transportKind } from '../../src/gateway/client.js';
import { earthquakeRequestSchema, indicatorRequestSchema } from '../../src/gateway/schemas.js';
import { probesAfter } from '../../src/worker/call.js';
import type { AttemptRecord } from '../../src/gateway/attempt.js';
import { GatewayError, retryPolicyOf } from '../../src/errors.js';
import { failedRecord } from '../support/attempts.js';

const event = {
  id: 'us7000abcd',
  time: '2025-05-06T09:24:12.123Z',
  magnitude: -0.4,
  magnitude_type: 'ml',
  place: null,
  latitude: 36.7,
  longitude: -116.3,
  depth_km: null,
  tsunami_flag: false,
  url: null,
};
const source = { name: 'USGS', license: 'public domain', url: 'https://earthquake.usgs.gov' };
const execution = { id: 'exec_1', invocation_id: 'inv_1', outcome: 'succeeded', usage: { units: 1 }, timing: {} };
const body = (result: unknown, exec: unknown = execution) =>
  JSON.stringify({ code: 0, message: 'ok', data: { execution: exec, result } });

describe('readAnswer', () => {
  it('accepts a spec answer, nulls and negative magnitudes included', () => {
    const a = readAnswer(earthquakeResultSchema, 200, null, body({ events: [event], source }), 0);
    expect(a.kind).toBeNull();
    expect(a.result?.events).toEqual([event]);
    expect(a.units).toBe(1);
  });

  it.each([
    [{ id: null, invocation_id: null, outcome: 'succeeded', usage: { units: null } }, [null, null, null]],
    [{ id: 7, invocation_id: { run: 'x' }, outcome: 'succeeded', usage: 'one', timing: 3 }, ['7', '{"run":"x"}', null]],
    [{ outcome: 'succeeded', usage: { units: '1' } }, [null, null, 1]],
    [{ outcome: 'succeeded', usage: { units: true } }, [null, null, null]],
  ])('reads an execution whose other fields are of any type (the spec shows none): %j', (exec, facts) => {
    const a = readAnswer(earthquakeResultSchema, 200, null, body({ events: [event], source }, exec), 0);
    expect(a.kind).toBeNull();
    expect(a.result?.events).toEqual([event]);
    expect([a.executionId, a.invocationId, a.units]).toEqual(facts);
  });

  it('refuses an answer holding more events than max_results asked, keeping its billing facts', () => {
    const asked = { start_time: '2025-05-06T00:00:00Z', end_time: '2025-05-07T00:00:00Z' };
    const events = ['a', 'b', 'c'].map((id) => ({ ...event, id }));
    const over = readAnswer(
      earthquakeResultFor({ ...asked, max_results: 2 }),
      200,
      null,
      body({ events, source }, { ...execution, usage: { units: 3 } }),
      0,
    );
    expect(over.kind).toBe('invalid_response');
    expect(over.result).toBeNull();
    expect(over.problem).toMatch(/events: holds 3 events, more than the max_results of 2 asked for/);
    expect([over.outcome, over.units]).toEqual(['succeeded', 3]);
    expect(
      readAnswer(earthquakeResultFor({ ...asked, max_results: 3 }), 200, null, body({ events, source }), 0).kind,
    ).toBeNull();
    // Without max_results the gateway's default of 50 applies.
    const many = Array.from({ length: 51 }, (_, i) => ({ ...event, id: `e${i}` }));
    expect(readAnswer(earthquakeResultFor(asked), 200, null, body({ events: many, source }), 0).kind).toBe(
      'invalid_response',
    );
  });

  it('refuses an event more than a second outside the time window asked; a second is the precision allowed', () => {
    const asked = { start_time: '2025-05-06T09:24:13Z', end_time: '2025-05-06T10:00:00.5Z', max_results: 200 };
    const at = (time: string) =>
      readAnswer(earthquakeResultFor(asked), 200, null, body({ events: [{ ...event, time }], source }), 0);
    for (const time of [
      '2025-05-06T09:24:12Z',
      '2025-05-06T09:24:13Z',
      '2025-05-06T10:00:01.5Z',
      '2025-05-06T12:00:01.5+02:00',
    ]) {
      expect(at(time).kind, time).toBeNull();
    }
    for (const time of ['2025-05-06T09:24:11.999Z', '2025-05-06T10:00:01.501Z', '2025-05-05T09:24:13Z']) {
      expect(at(time).kind, time).toBe('invalid_response');
      expect(at(time).problem, time).toMatch(
        /events\.0\.time: .* is outside the 2025-05-06T09:24:13Z\.\.2025-05-06T10:00:00\.5Z asked for/,
      );
    }
  });

  it('allows a minute for a time that is a whole minute, an hour for a whole hour: a gateway reporting minutes', () => {
    const asked = { start_time: '2025-05-06T09:24:13Z', end_time: '2025-05-06T10:00:00.5Z', max_results: 200 };
    const at = (...times: string[]) =>
      readAnswer(
        earthquakeResultFor(asked),
        200,
        null,
        body({ events: times.map((time, i) => ({ ...event, id: `e${i}`, time })), source }),
        0,
      ).kind;
    // Truncated to the minute, an event of 09:24:30 is reported at 09:24; rounded up, one of 10:00:00.4 at 10:01.
    expect(at('2025-05-06T09:24:00Z', '2025-05-06T09:50:00Z')).toBeNull();
    expect(at('2025-05-06T09:23:13Z', '2025-05-06T10:01:00.5Z')).toBe('invalid_response');
    expect(at('2025-05-06T09:23:13Z')).toBe('invalid_response');
    expect(at('2025-05-06T10:01:00Z', '2025-05-06T09:30:00Z')).toBeNull();
    expect(at('2025-05-06T10:02:00Z')).toBe('invalid_response');
    // Each time by its own precision: beside a time to the millisecond, one to the minute keeps its minute.
    expect(at('2025-05-06T09:24:00Z', '2025-05-06T09:50:17.25Z')).toBeNull();
    expect(at('2025-05-06T09:24:11.5Z', '2025-05-06T09:50:17.25Z')).toBe('invalid_response');
    // To the hour, an event of 09:40 is reported at 09:00.
    expect(at('2025-05-06T09:00:00Z', '2025-05-06T07:00:00Z')).toBe('invalid_response');
    expect(at('2025-05-06T09:00:00Z', '2025-05-06T11:00:00Z')).toBeNull();
    expect(at('2025-05-06T09:22:00Z')).toBe('invalid_response');
  });

  it('accepts every RFC 3339 form of an event time: lower-case t and z, offsets, any fraction; refuses others', () => {
    for (const time of [
      '2025-05-06t09:24:12z',
      '2025-05-06T11:24:12.123456789+02:00',
      '2025-05-06T09:24:12.1234567890123Z',
      '2025-05-06T09:24:12Z',
    ]) {
      const a = readAnswer(earthquakeResultSchema, 200, null, body({ events: [{ ...event, time }], source }), 0);
      expect(a.kind, time).toBeNull();
      expect(Date.parse(a.result!.events![0]!.time)).toBe(Date.parse(time));
    }
    for (const time of [
      '2025-05-06 09:24:12Z',
      '2025-05-06T09:24:12',
      '2025-02-31T00:00:00Z',
      '20250506T092412Z',
      '2025-05-06T09:24:60Z',
      '2025-05-06T09:24:12+24:00',
      '2025-05-06T09:24:12-02:60',
    ]) {
      expect(
        readAnswer(earthquakeResultSchema, 200, null, body({ events: [{ ...event, time }], source }), 0).kind,
        time,
      ).toBe('invalid_response');
    }
  });

  it('reads an event in a leap second as the next second begun, and checks it against the window as that', () => {
    const req = { start_time: '2016-12-31T23:00:00Z', end_time: '2017-01-01T00:00:00Z', max_results: 200 };
    const at = (time: string) =>
      readAnswer(earthquakeResultFor(req), 200, null, body({ events: [{ ...event, time }], source }), 0);
    for (const [time, read] of [
      ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00Z'],
      ['2017-01-01T08:59:60.250123+09:00', '2017-01-01T00:00:00.250Z'],
    ]) {
      const a = at(time!);
      expect(a.kind, time).toBeNull();
      expect(a.result!.events![0]!.time).toBe(read);
    }
    expect(at('2016-12-31T23:59:60.5Z').result!.events![0]!.time).toBe('2017-01-01T00:00:00.500Z');
    expect(at('2016-12-31T23:58:60Z').kind).toBe('invalid_response');
  });

  it('reads an answer that says it returned no event as an empty match, whatever its result looks like', () => {
    const nothing = { ...execution, usage: { units: 0 } };
    const read = (result: unknown, exec: unknown = nothing, status = 200) =>
      readAnswer(earthquakeResultSchema, status, null, body(result, exec), 0, null, EMPTY_EARTHQUAKE_MATCH);
    for (const result of [null, undefined, {}, { events: null }, { events: [] }, { source }, { events: [], source }]) {
      const a = read(result);
      expect(a.kind, JSON.stringify(result)).toBeNull();
      expect(a.result?.events ?? [], JSON.stringify(result)).toEqual([]);
    }
    expect(read(null, nothing, 404).kind).toBeNull();
    expect(read({ events: null, source }, { ...execution, usage: { units: '0' } }).kind).toBeNull();
    // Nothing says the match was empty, or something says it was not: the answer breaks the spec.
    for (const exec of [
      execution,
      { ...execution, usage: {} },
      { ...execution, usage: null },
      { ...nothing, outcome: 'x' },
    ])
      expect(read(null, exec).kind, JSON.stringify(exec)).not.toBeNull();
    for (const result of [{ events: {} }, { events: 'none' }, { events: [{ id: 'x' }] }, [], 'empty'])
      expect(read(result).kind, JSON.stringify(result)).toBe('invalid_response');
    // Without an empty match to stand for (the indicator query), a result missing is a broken answer.
    expect(readAnswer(earthquakeResultSchema, 200, null, body(null, nothing), 0).kind).toBe('invalid_response');
  });

  it('reads a message of null as none', () => {
    const text = JSON.stringify({ code: 0, message: null, data: { execution, result: { events: [], source } } });
    const a = readAnswer(earthquakeResultSchema, 200, null, text, 0);
    expect([a.kind, a.message]).toEqual([null, null]);
  });

  it('reads events: null as no events', () => {
    const a = readAnswer(earthquakeResultSchema, 200, null, body({ events: null, source }), 0);
    expect(a.kind).toBeNull();
    expect(a.result?.events).toBeNull();
  });

  it('a schema-breaking answer yields no result but keeps the billed execution facts', () => {
    const { latitude: _drop, ...broken } = event;
    const a = readAnswer(earthquakeResultSchema, 200, null, body({ events: [broken], source }), 0);
    expect(a.kind).toBe('invalid_response');
    expect(a.result).toBeNull();
    expect(a.outcome).toBe('succeeded');
    expect(a.units).toBe(1);
    expect(a.problem).toMatch(/latitude/);
  });

  it('salvages the execution from a body cut off mid-JSON', () => {
    const text = body({ events: [event, event], source }).slice(0, 200);
    const a = readAnswer(earthquakeResultSchema, 200, null, text, 0);
    expect(a.kind).toBe('invalid_response');
    expect(a.outcome).toBe('succeeded');
    expect(a.executionId).toBe('exec_1');
    expect(salvageExecution('<html>oops</html>')).toEqual({});
  });

  it("keeps the gateway's message for a refused request", () => {
    const text = JSON.stringify({
      code: 400,
      message: 'country: unknown code ZZZ',
      data: { execution: { ...execution, outcome: 'parameter_error' }, result: null },
    });
    const a = readAnswer(indicatorResultSchema, 400, null, text, 0);
    expect(a.kind).toBe('parameters');
    expect(a.problem).toBe('country: unknown code ZZZ');
  });

  it('says a 404 without an execution is a wrong base URL or path, and never retries it', () => {
    for (const text of ['{"code":404,"message":"not found"}', '<html>Not Found</html>', '']) {
      const a = readAnswer(earthquakeResultSchema, 404, null, text, 0, '/v1/earthquakes');
      expect(a.kind).toBe('parameters');
      expect(retryPolicyOf(a.kind!)).toBe('never');
      expect(a.problem).toMatch(/gateway answered 404 Not Found for \/v1\/earthquakes.*check GATEWAY_BASE_URL/);
    }
    expect(
      readAnswer(earthquakeResultSchema, 404, null, '{"code":404,"message":"not found"}', 0, '/x').problem,
    ).toContain('(it said: not found)');
  });

  it("keeps the gateway's message for a 404 the operation itself answered", () => {
    const text = JSON.stringify({
      code: 404,
      message: 'indicator: no such code',
      data: { execution: { ...execution, outcome: 'parameter_error' }, result: null },
    });
    const a = readAnswer(indicatorResultSchema, 404, null, text, 0, '/v1/indicators');
    expect(a.kind).toBe('parameters');
    expect(a.problem).toBe('indicator: no such code');
  });
});

describe('classifyAttempt', () => {
  const c = (httpStatus: number | null, outcome: string | null, bodyValid = true) =>
    classifyAttempt({ httpStatus, outcome, bodyValid });
  it.each([
    [200, 'succeeded', true, null],
    [200, 'succeeded', false, 'invalid_response'],
    [200, null, false, 'invalid_response'],
    [401, null, false, 'auth'],
    [403, null, false, 'auth'],
    [429, null, false, 'rate_limited'],
    [400, 'parameter_error', true, 'parameters'],
    [404, null, false, 'parameters'],
    [308, null, false, 'parameters'],
    [301, null, false, 'parameters'],
    [307, null, false, 'server'],
    [502, 'data_source_error', true, 'data_source'],
    [504, 'unknown', true, 'unknown'],
    [200, 'weird_new_outcome', true, 'unknown'],
    [200, 'invalid_argument', true, 'parameters'],
    [200, 'upstream_invalid_response', true, 'data_source'],
    [200, 'invalid', true, 'unknown'],
    [200, 'rejected', true, 'unknown'],
    [400, 'rejected', true, 'parameters'],
    [500, null, false, 'server'],
    [503, null, false, 'server'],
    // Execution success is the outcome, billed whatever the status: asked again, it is billed again.
    [500, 'succeeded', true, null],
    [404, 'succeeded', true, null],
    [429, 'succeeded', true, null],
    [500, 'succeeded', false, 'server'],
    [404, 'succeeded', false, 'parameters'],
  ] as const)('HTTP %s outcome %s valid %s -> %s', (status, outcome, valid, kind) => {
    expect(c(status, outcome, valid)).toBe(kind);
  });
  it.each([
    [400, 'upstream catalog timed out', 'data_source'],
    [400, 'Data source unavailable', 'data_source'],
    [422, 'quota exceeded for today', 'rate_limited'],
    [400, 'service temporarily unavailable, try again', 'unknown'],
    [400, 'provider must be quake-catalog', 'parameters'],
    [400, 'start_time must not be in the future', 'parameters'],
    [400, 'unknown field: invocation', 'parameters'],
    [400, 'max_results: separate values are not accurate', 'parameters'],
    [404, 'upstream not found', 'parameters'],
    [500, 'invalid start_time', 'server'],
  ] as const)('HTTP %s with no outcome, message %j -> %s', (httpStatus, message, kind) => {
    expect(classifyAttempt({ httpStatus, outcome: null, bodyValid: false, message })).toBe(kind);
  });

  it('transport failures have no response', () => {
    expect(classifyAttempt({ httpStatus: null, outcome: null, bodyValid: false, transportFailure: 'timeout' })).toBe(
      'timeout',
    );
    expect(classifyAttempt({ httpStatus: null, outcome: null, bodyValid: false, transportFailure: 'transport' })).toBe(
      'transport',
    );
  });
  it('maps kinds to retry behaviour', () => {
    expect(retryPolicyOf('parameters')).toBe('never');
    expect(retryPolicyOf('auth')).toBe('never');
    expect(retryPolicyOf('rate_limited')).toBe('after_retry_after');
    expect(retryPolicyOf('server')).toBe('backoff');
    expect(retryPolicyOf('invalid_response')).toBe('backoff');
  });
  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfterMs('3', 0)).toBe(3000);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfterMs('soon', 0)).toBeNull();
  });
});

describe('clockBound: a refusal the gateway clock alone may explain', () => {
  const now = Date.parse('2027-01-01T06:00:00Z');
  const quake = (start: string) => ({ provider: 'quake-catalog', start_time: start, end_time: '2027-01-01T06:00:00Z' });
  const years = (end?: number) => ({
    provider: 'development-indicators',
    country: 'US',
    indicator: 'X.Y',
    end_year: end,
  });

  it.each([
    ['earthquake', quake('2027-01-01T05:59:59Z'), true],
    ['earthquake', quake('2027-01-01T05:00:00.001Z'), true],
    ['earthquake', quake('2027-01-01T05:00:00Z'), false],
    ['earthquake', quake('2026-12-01T00:00:00Z'), false],
    ['earthquake', { start_time: 'not a time' }, false],
    // Six hours into 2027 in UTC, UTC-12 is still in 2026.
    ['indicator', years(2027), true],
    ['indicator', years(2026), false],
    ['indicator', years(), false],
  ] as const)('%s %j: %s', (operation, request, expected) => {
    expect(clockBound(operation, request, now)).toBe(expected);
  });

  it('makes a parameter error retryable, and says why; any other parameter error stays final', () => {
    const refusal = 'start_time must not be in the future';
    const record = (request: Record<string, unknown>): AttemptRecord =>
      failedRecord(
        { request, httpStatus: 400, code: 400, message: refusal, errorKind: 'parameters', errorDetail: refusal },
        now,
      );
    const late = attemptError(record(quake('2027-01-01T05:59:00Z')), null);
    expect(late.retryable).toBe(true);
    expect(late.message).toMatch(/clock may be behind ours/);
    const old = attemptError(record(quake('2026-12-01T00:00:00Z')), null);
    expect(old.retryable).toBe(false);
    const notFound = attemptError({ ...record(quake('2027-01-01T05:59:00Z')), httpStatus: 404 }, null);
    expect(notFound.retryable).toBe(false);
  });
});

describe('transportKind', () => {
  it('reads a connection never opened as transport (nothing sent), a wait for the answer cut off as timeout', () => {
    expect(transportKind(new undiciErrors.ConnectTimeoutError())).toBe('transport');
    expect(transportKind(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe('transport');
    expect(transportKind(new undiciErrors.HeadersTimeoutError())).toBe('timeout');
    expect(transportKind(new undiciErrors.BodyTimeoutError())).toBe('timeout');
    expect(transportKind(new DOMException('signal timed out', 'TimeoutError'))).toBe('timeout');
  });

  it('makes a connection never opened the gateway away, to be ridden out; a timeout is not', () => {
    const failed = (kind: 'timeout' | 'transport') =>
      attemptError(failedRecord({ errorKind: kind }, Date.parse('2025-05-06T00:00:00Z')), null);
    expect(failed(transportKind(new undiciErrors.ConnectTimeoutError())).gatewayAway).toBe(true);
    expect(failed(transportKind(new undiciErrors.HeadersTimeoutError())).gatewayAway).toBe(false);
  });
});

describe('a liveness probe', () => {
  it('asks what the spec has every gateway refuse: a request of each operation that breaks it', () => {
    const now = () => new Date('2026-11-29T00:00:00Z');
    expect(earthquakeRequestSchema(now).safeParse(LIVENESS_REQUESTS.earthquake).success).toBe(false);
    expect(indicatorRequestSchema(now).safeParse(LIVENESS_REQUESTS.indicator).success).toBe(false);
  });

  it('follows a timeout without an answer once the failures in a row reach the last allowed', () => {
    const at = Date.parse('2025-05-06T00:00:00Z');
    const timeout = failedRecord({ errorKind: 'timeout' }, at);
    const ctx = { jobId: null, attempt: 1, probeTimeoutsFrom: 3 };
    expect([2, 3, 4].map((n) => probesAfter(timeout, n, ctx))).toEqual([false, true, true]);
    expect(probesAfter({ ...timeout, httpStatus: 504 }, 3, ctx)).toBe(false);
    expect(probesAfter(failedRecord({ errorKind: 'server' }, at), 3, ctx)).toBe(false);
    expect(probesAfter(timeout, 3, { jobId: null, attempt: 1 })).toBe(false);
    expect(probesAfter(timeout, 1, { jobId: null, attempt: 1, probeTimeoutsFrom: 1 })).toBe(true);
  });

  it('makes a timeout the gateway away only when the probe got no answer either', () => {
    expect(new GatewayError('timeout', 'x', { gatewaySilent: true }).gatewayAway).toBe(true);
    expect(new GatewayError('timeout', 'x', { gatewaySilent: false }).gatewayAway).toBe(false);
    expect(new GatewayError('invalid_response', 'x', { gatewaySilent: true }).gatewayAway).toBe(false);
  });
});

describe('a refusal that names nothing wrong with the request', () => {
  const at = Date.parse('2025-05-06T00:00:00Z');
  const refusal = (httpStatus: number, message: string | null, outcome: string | null = null) =>
    failedRecord({ errorKind: 'parameters', httpStatus, message, outcome }, at);

  it('is doubtful: a failure elsewhere may come as a 4xx, so it is asked again, counted', () => {
    expect(doubtfulRefusal(refusal(400, null))).toBe(true);
    expect(doubtfulRefusal(refusal(400, 'request failed', 'error'))).toBe(true);
    expect(doubtfulRefusal(refusal(422, 'unexpected error'))).toBe(true);
    const e = attemptError(refusal(400, 'internal error', 'failed'), null);
    expect([e.kind, e.retryable]).toEqual(['parameters', true]);
    expect(e.message).toMatch(/names nothing wrong with the request/);
  });

  it('is not, where it names a field, says what is wrong, or its status refuses whatever is sent', () => {
    expect(doubtfulRefusal(refusal(400, 'end_time: must be after start_time'))).toBe(false);
    const country = { ...refusal(400, 'unknown country or aggregate code ZZZ'), operation: 'indicator' as const };
    expect(doubtfulRefusal(country)).toBe(false);
    expect(doubtfulRefusal(refusal(400, null, 'invalid_parameters'))).toBe(false);
    expect(doubtfulRefusal(refusal(400, 'Validation failed'))).toBe(false);
    expect(doubtfulRefusal(refusal(404, null))).toBe(false);
    expect(doubtfulRefusal(refusal(308, null))).toBe(false);
    expect(attemptError(refusal(400, 'max_results out of range'), null).retryable).toBe(false);
  });
});
