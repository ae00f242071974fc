import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import {
  earthquakeResultSchema,
  envelopeSchema,
  indicatorResultSchema,
  type EarthquakeEvent,
} from '../../src/gateway/schemas.js';
import { bundledDataPaths, loadUsgsFiles, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { OPERATIONS } from '../../src/domain/spec.js';
import { waitFor } from '../support/wait.js';

const KEY = 'test-key-7f3a';
const EQ = OPERATIONS.earthquake.path;
const IND = OPERATIONS.indicator.path;
const JSON_HEADERS = { 'content-type': 'application/json' };
const BEARER = { ...JSON_HEADERS, authorization: `Bearer ${KEY}` };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => Record<string, unknown> & {
    code: number;
    message?: string;
    data?: { execution: Record<string, unknown>; result: unknown };
  };
}

let emu: RunningEmulator;
let groundTruth: EarthquakeEvent[];

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = BEARER,
  method = 'POST',
): Promise<Answer> {
  const r = await request(`${emu.url}${path}`, {
    method: method as 'POST',
    headers,
    body: method === 'POST' ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
  const text = await r.body.text();
  return { status: r.statusCode, headers: r.headers, text, json: () => JSON.parse(text) as ReturnType<Answer['json']> };
}

const quake = (extra: Record<string, unknown> = {}) => ({
  provider: 'quake-catalog',
  start_time: '2025-08-20T00:00:00Z',
  end_time: '2025-08-27T00:00:00Z',
  ...extra,
});
const indicator = (extra: Record<string, unknown> = {}) => ({
  provider: 'development-indicators',
  country: 'USA',
  indicator: 'SP.POP.TOTL',
  start_year: 2010,
  end_year: 2016,
  ...extra,
});

beforeAll(async () => {
  const files = bundledDataPaths();
  groundTruth = await loadUsgsFiles(files.earthquakeFiles);
  emu = await startEmulator({ key: KEY, seed: 11, ...files });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  emu.resetCalls();
  emu.setOrder('newest');
  emu.setSilentCap(null);
  emu.setTimePrecision('ms');
  emu.setLatencyMs(0);
  emu.setFaultRules([]);
});

describe('authentication (spec part 5)', () => {
  it('accepts Authorization: Bearer and X-API-Key', async () => {
    expect((await post(EQ, quake(), BEARER)).status).toBe(200);
    expect((await post(EQ, quake(), { ...JSON_HEADERS, 'x-api-key': KEY })).status).toBe(200);
    expect(emu.calls.map((c) => c.authorized)).toEqual([true, true]);
  });

  it('answers 401 without or with a wrong credential, unbilled, and never records the key', async () => {
    for (const headers of [
      JSON_HEADERS,
      { ...JSON_HEADERS, authorization: 'Bearer nope' },
      { ...JSON_HEADERS, 'x-api-key': 'nope' },
      { ...JSON_HEADERS, authorization: KEY },
    ]) {
      const a = await post(EQ, quake(), headers);
      expect(a.status).toBe(401);
      expect(a.json()).toEqual({ code: 401, message: 'invalid or missing credential' });
    }
    expect(emu.calls).toHaveLength(4);
    expect(emu.calls.every((c) => !c.authorized && !c.billed && c.httpStatus === 401 && c.outcome === null)).toBe(true);
    expect(JSON.stringify(emu.calls)).not.toContain(KEY);
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    const missing = await post('/v1/gateway/earthquake-standard/v2/earthquake-queries', quake());
    expect(missing.status).toBe(404);
    const get = await post(EQ, undefined, BEARER, 'GET');
    expect(get.status).toBe(405);
    expect(get.headers['allow']).toBe('POST');
    expect(emu.calls.map((c) => [c.operation, c.httpStatus])).toEqual([
      [null, 404],
      ['earthquake', 405],
    ]);
  });
});

describe('parameter errors (HTTP 400, not billed)', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a 32-day window', quake({ end_time: '2025-09-21T00:00:00Z' }), /^end_time: /],
    ['max_results 201', quake({ max_results: 201 }), /^max_results: /],
    ['an incomplete circle', quake({ latitude: 35, radius_km: 100 }), /^radius_km: /],
    ['an unknown field', quake({ sort: 'time' }), /^sort: unknown field$/],
    [
      'a future start',
      quake({ start_time: '2999-01-01T00:00:00Z', end_time: '2999-01-02T00:00:00Z' }),
      /^start_time: /,
    ],
  ];
  for (const [what, body, message] of cases) {
    it(`rejects ${what}`, async () => {
      const a = await post(EQ, body);
      expect(a.status).toBe(400);
      const env = a.json();
      expect(env.code).toBe(400);
      expect(env.message).toMatch(message);
      expect(env.data?.result).toBeNull();
      expect(env.data?.execution).toMatchObject({ outcome: 'parameter_error', usage: { units: 0 } });
      expect(emu.calls[0]).toMatchObject({ httpStatus: 400, outcome: 'parameter_error', billed: false, units: 0 });
    });
  }

  it('rejects a body that is not JSON, or not sent as JSON', async () => {
    const bad = await post(EQ, '{"provider":', BEARER);
    expect(bad.status).toBe(400);
    expect(bad.json().message).toBe('body: must be valid JSON');
    const plain = await post(EQ, quake(), { authorization: `Bearer ${KEY}`, 'content-type': 'text/plain' });
    expect(plain.status).toBe(400);
    expect(plain.json().message).toBe('content-type: must be application/json');
    expect(emu.calls[0]!.body).toBe('{"provider":');
  });

  it('rejects unknown indicators and countries', async () => {
    const a = await post(IND, indicator({ indicator: 'XX.NOPE' }));
    expect([a.status, a.json().message]).toEqual([400, 'indicator: unknown indicator XX.NOPE']);
    const b = await post(IND, indicator({ country: 'QQ' }));
    expect([b.status, b.json().message]).toEqual([400, 'country: unknown country or aggregate code QQ']);
  });
});

describe('successful answers', () => {
  it('replaces a caller invocation_id and records that one was sent', async () => {
    const a = await post(EQ, quake({ invocation_id: 'caller-chosen' }));
    expect(a.status).toBe(200);
    const exec = a.json().data!.execution;
    expect(exec['invocation_id']).not.toBe('caller-chosen');
    expect(exec['invocation_id']).toMatch(/^inv_[0-9a-f]{16}$/);
    expect(emu.calls[0]).toMatchObject({ hadInvocationId: true, httpStatus: 200, outcome: 'succeeded' });
    expect((emu.calls[0]!.body as Record<string, unknown>)['invocation_id']).toBe('caller-chosen');
  });

  it('returns the newest max_results events, equal to the loader ground truth', async () => {
    const a = await post(EQ, quake({ min_magnitude: 2.5, max_results: 120 }));
    const env = envelopeSchema(earthquakeResultSchema).parse(a.json());
    const start = Date.parse('2025-08-20T00:00:00Z');
    const end = Date.parse('2025-08-27T00:00:00Z');
    const matching = groundTruth
      .filter((e) => Date.parse(e.time) >= start && Date.parse(e.time) <= end && (e.magnitude ?? -9) >= 2.5)
      .sort((x, y) => Date.parse(y.time) - Date.parse(x.time));
    expect(matching.length).toBeGreaterThan(120);
    expect(env.data.result.events).toEqual(matching.slice(0, 120));
    expect(env.code).toBe(0);
    expect(env.data.execution).toMatchObject({ outcome: 'succeeded', usage: { units: 120 } });
    const timing = a.json().data!.execution['timing'] as Record<string, unknown>;
    expect(Object.keys(timing).sort()).toEqual(['duration_ms', 'finished_at', 'started_at']);
    expect(emu.calls[0]).toMatchObject({
      operation: 'earthquake',
      billed: true,
      units: 120,
      returned: 120,
      matched: matching.length,
      truncated: true,
      executionId: env.data.execution.id,
      fault: null,
    });
  });

  it("serves 'oldest' and seeded 'random' orders", async () => {
    emu.setOrder('oldest');
    const oldest = envelopeSchema(earthquakeResultSchema).parse((await post(EQ, quake({ max_results: 5 }))).json());
    const times = oldest.data.result.events!.map((e) => Date.parse(e.time));
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(oldest.data.result.events![0]!.time >= '2025-08-20T00:00:00').toBe(true);
    emu.setOrder('random');
    const r = envelopeSchema(earthquakeResultSchema).parse((await post(EQ, quake({ max_results: 50 }))).json());
    expect(new Set(r.data.result.events!.map((e) => e.id)).size).toBe(50);
  });

  it("plays 'magnitude' order, a silent cap and whole-second times on the real catalog, logging the order", async () => {
    emu.setOrder('magnitude');
    emu.setSilentCap(40);
    emu.setTimePrecision('second');
    const a = envelopeSchema(earthquakeResultSchema).parse((await post(EQ, quake({ max_results: 100 }))).json());
    const events = a.data.result.events!;
    expect(events).toHaveLength(40);
    const mags = events.map((e) => e.magnitude ?? -Infinity);
    expect(mags).toEqual([...mags].sort((x, y) => y - x));
    expect(events.every((e) => e.time.endsWith(':00.000Z') || /:\d\d\.000Z$/.test(e.time))).toBe(true);
    const start = Date.parse('2025-08-20T00:00:00Z');
    const end = Date.parse('2025-08-27T00:00:00Z');
    const inWindow = groundTruth.filter((e) => Date.parse(e.time) >= start && Date.parse(e.time) <= end);
    expect(inWindow.filter((e) => (e.magnitude ?? -Infinity) > mags[39]!).length).toBeLessThan(40);
    expect(emu.calls[0]).toMatchObject({ order: 'magnitude', returned: 40, truncated: true, outcome: 'succeeded' });
    await post(IND, indicator());
    expect(emu.calls[1]!.order).toBeNull();
  });

  it('answers an empty window with events: [] and zero units', async () => {
    const a = envelopeSchema(earthquakeResultSchema).parse(
      (await post(EQ, quake({ start_time: '2024-01-01T00:00:00Z', end_time: '2024-01-02T00:00:00Z' }))).json(),
    );
    expect(a.data.result.events).toEqual([]);
    expect(emu.calls[0]).toMatchObject({ billed: true, units: 0, returned: 0 });
  });

  it('answers every requested indicator year, null after the file ends, units counting them all', async () => {
    const env = envelopeSchema(indicatorResultSchema).parse(
      (await post(IND, indicator({ start_year: 2014, end_year: 2020 }))).json(),
    );
    expect(env.data.result.values!.map((v) => v.year)).toEqual([2020, 2019, 2018, 2017, 2016, 2015, 2014]);
    expect(env.data.result.values!.slice(0, 4).map((v) => v.value)).toEqual([null, null, null, null]);
    expect(env.data.result.values!.slice(4).every((v) => typeof v.value === 'number')).toBe(true);
    expect(env.data.execution.usage?.units).toBe(7);
    expect(emu.calls[0]).toMatchObject({ units: 7, returned: 7, matched: 7 });
  });

  it('answers indicator queries with the World Bank 2-character country id', async () => {
    for (const [country, id] of [
      ['USA', 'US'],
      ['US', 'US'],
      ['CHN', 'CN'],
      ['WLD', '1W'],
    ] as const) {
      const env = envelopeSchema(indicatorResultSchema).parse((await post(IND, indicator({ country }))).json());
      expect(env.data.result.country.id).toBe(id);
      expect(env.data.result.values!.map((v) => v.year)).toEqual([2016, 2015, 2014, 2013, 2012, 2011, 2010]);
      expect(env.data.result.last_updated).toBe('2018-01-25');
      expect(env.data.execution.usage?.units).toBe(7);
    }
    expect(emu.calls.map((c) => c.operation)).toEqual(['indicator', 'indicator', 'indicator', 'indicator']);
  });
});

describe('live catalog over HTTP', () => {
  const WINDOW = { from: new Date('2025-09-01T00:00:00Z'), to: new Date('2025-09-03T00:00:00Z') };

  /** Every event in [startMs, endMs]: halves any window whose answer is full (a capped answer may hide events). */
  async function sweep(live: RunningEmulator, startMs: number, endMs: number): Promise<EarthquakeEvent[]> {
    const r = await request(`${live.url}${EQ}`, {
      method: 'POST',
      headers: BEARER,
      body: JSON.stringify({
        provider: 'quake-catalog',
        start_time: new Date(startMs).toISOString(),
        end_time: new Date(endMs).toISOString(),
        max_results: 200,
      }),
    });
    const events = envelopeSchema(earthquakeResultSchema).parse(await r.body.json()).data.result.events ?? [];
    if (events.length < 200) return events;
    const mid = Math.floor((startMs + endMs) / 2);
    return [...(await sweep(live, startMs, mid)), ...(await sweep(live, mid + 1, endMs))];
  }

  it('a sweep after the changes stop sees exactly the catalog as it ended', async () => {
    const files = bundledDataPaths();
    const live = await startEmulator({
      key: KEY,
      seed: 3,
      earthquakeFiles: files.earthquakeFiles.filter((f) => f.includes('2025-08-19')),
      indicators: [],
    });
    try {
      const inWindow = (events: EarthquakeEvent[]) =>
        events.filter((e) => e.time >= WINDOW.from.toISOString() && e.time <= WINDOW.to.toISOString());
      const initial = inWindow(live.currentEvents()).length;
      live.startLive({
        addPerMinute: 60_000,
        revisePerMinute: 30_000,
        deletePerMinute: 12_000,
        tickMs: 10,
        window: WINDOW,
      });
      const during = await sweep(live, WINDOW.from.getTime(), WINDOW.to.getTime());
      live.stopLive();
      live.mutate({ add: 7, revise: 5, delete: 3 }, WINDOW);
      const after = await sweep(live, WINDOW.from.getTime(), WINDOW.to.getTime());
      const ended = inWindow(live.currentEvents());
      const key = (e: EarthquakeEvent) => JSON.stringify(e);
      expect(after.map(key).sort()).toEqual(ended.map(key).sort());
      expect(during.length).toBeGreaterThan(0);
      const n = (kind: string) => live.changes.filter((c) => c.kind === kind).length;
      expect(n('add')).toBeGreaterThanOrEqual(7);
      expect(n('revise')).toBeGreaterThanOrEqual(5);
      expect(n('delete')).toBeGreaterThanOrEqual(3);
      expect(ended.length).toBe(initial + n('add') - n('delete'));
      expect(new Set(ended.map((e) => e.id)).size).toBe(ended.length);
    } finally {
      await live.close();
    }
  });

  it('revises an indicator series over HTTP', async () => {
    const result = emu.reviseIndicator({ indicator: 'SP.POP.TOTL', country: 'US', year: 2016, value: 1 });
    expect(result).toMatchObject({ indicator: 'SP.POP.TOTL', country: 'US', year: 2016, after: 1 });
    expect(result.lastUpdated).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const env = envelopeSchema(indicatorResultSchema).parse((await post(IND, indicator())).json());
    expect(env.data.result.values![0]).toEqual({ year: 2016, value: 1 });
    expect(env.data.result.last_updated).toBe(result.lastUpdated);
    emu.reviseIndicator({
      indicator: 'SP.POP.TOTL',
      country: 'US',
      year: 2016,
      value: result.before,
      lastUpdated: '2018-01-25',
    });
    expect(() => emu.reviseIndicator({ indicator: 'SP.POP.TOTL', country: 'QQ', year: 2016, value: 1 })).toThrow(
      RangeError,
    );
  });
});

describe('faults', () => {
  it('server_error: HTTP 500 without an execution', async () => {
    emu.injectFaults('server_error', 1);
    const a = await post(EQ, quake());
    expect([a.status, a.json()]).toEqual([500, { code: 500, message: 'internal error' }]);
    expect(emu.calls[0]).toMatchObject({
      fault: 'server_error',
      httpStatus: 500,
      outcome: null,
      billed: false,
      executionId: null,
    });
  });

  it('rate_limited: HTTP 429 with Retry-After', async () => {
    emu.injectFaults('rate_limited', 1);
    const a = await post(IND, indicator());
    expect([a.status, a.headers['retry-after'], a.json()]).toEqual([
      429,
      '1',
      { code: 429, message: 'too many requests' },
    ]);
    expect(emu.calls[0]).toMatchObject({ fault: 'rate_limited', httpStatus: 429, billed: false });
  });

  it('data_source: HTTP 502, outcome data_source_error, not billed', async () => {
    emu.injectFaults('data_source', 1);
    const a = await post(EQ, quake());
    expect(a.status).toBe(502);
    expect(a.json().data).toMatchObject({
      execution: { outcome: 'data_source_error', usage: { units: 0 } },
      result: null,
    });
    expect(emu.calls[0]).toMatchObject({ fault: 'data_source', outcome: 'data_source_error', billed: false, units: 0 });
  });

  it('unknown_result: HTTP 504, outcome unknown, not billed', async () => {
    emu.injectFaults('unknown_result', 1);
    const a = await post(IND, indicator());
    expect(a.status).toBe(504);
    expect(a.json().data).toMatchObject({ execution: { outcome: 'unknown', usage: { units: 0 } }, result: null });
    expect(emu.calls[0]).toMatchObject({ fault: 'unknown_result', outcome: 'unknown', billed: false });
  });

  it('connection_reset: the socket closes without an answer', async () => {
    emu.injectFaults('connection_reset', 1);
    await expect(post(EQ, quake())).rejects.toThrow();
    expect(emu.calls[0]).toMatchObject({ fault: 'connection_reset', httpStatus: null, outcome: null, billed: false });
    expect((await post(EQ, quake())).status).toBe(200);
  });

  it('malformed_json: HTTP 200 with a cut body, billed', async () => {
    emu.injectFaults('malformed_json', 1);
    const a = await post(EQ, quake({ max_results: 10 }));
    expect(a.status).toBe(200);
    expect(() => a.json()).toThrow(SyntaxError);
    expect(a.text.startsWith('{"code":0')).toBe(true);
    expect(emu.calls[0]).toMatchObject({
      fault: 'malformed_json',
      httpStatus: 200,
      outcome: 'succeeded',
      billed: true,
      units: 10,
    });
  });

  it('schema_break: HTTP 200, succeeded and billed, but the result breaks the spec', async () => {
    emu.injectFaults('schema_break', 2);
    const a = await post(EQ, quake({ max_results: 3 }));
    expect(a.json().data!.execution).toMatchObject({ outcome: 'succeeded', usage: { units: 3 } });
    expect(envelopeSchema(earthquakeResultSchema).safeParse(a.json()).success).toBe(false);
    const b = await post(IND, indicator());
    expect(envelopeSchema(indicatorResultSchema).safeParse(b.json()).success).toBe(false);
    expect(emu.calls.map((c) => [c.fault, c.billed, c.units])).toEqual([
      ['schema_break', true, 3],
      ['schema_break', true, 7],
    ]);
  });

  it('queued faults are not used up by rejected requests', async () => {
    emu.injectFaults('server_error', 1);
    expect((await post(EQ, quake(), JSON_HEADERS)).status).toBe(401);
    expect((await post(EQ, quake({ max_results: 0 }))).status).toBe(400);
    expect((await post(EQ, quake())).status).toBe(500);
    expect((await post(EQ, quake())).status).toBe(200);
    expect(emu.calls.map((c) => c.fault)).toEqual([null, null, 'server_error', null]);
  });

  it('probability rules apply per request', async () => {
    emu.setFaultRules([{ kind: 'rate_limited', probability: 1 }]);
    expect((await post(EQ, quake())).status).toBe(429);
    emu.setFaultRules([{ kind: 'rate_limited', probability: 0 }]);
    expect((await post(EQ, quake())).status).toBe(200);
  });
});

describe('latency, call log and shutdown', () => {
  it('waits latencyMs before answering', async () => {
    emu.setLatencyMs(200);
    const t0 = performance.now();
    expect((await post(IND, indicator())).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('logs every request in arrival order with increasing execution ids', async () => {
    await post(EQ, quake({ max_results: 2 }));
    await post(IND, indicator({ country: 'QQ' }));
    await post(EQ, quake(), {});
    expect(emu.calls.map((c) => [c.operation, c.httpStatus, c.outcome, c.billed, c.units])).toEqual([
      ['earthquake', 200, 'succeeded', true, 2],
      ['indicator', 400, 'parameter_error', false, 0],
      ['earthquake', 401, null, false, 0],
    ]);
    const [first, second] = emu.calls.map((c) => Number(c.executionId?.slice('exec_'.length)));
    expect(second).toBe(first! + 1);
    expect(emu.calls[0]!.at).toBeInstanceOf(Date);
    expect(emu.calls[0]!.path).toBe(EQ);
  });

  it('close() does not wait for a slow answer', async () => {
    let clockReads = 0;
    const now = () => (clockReads++, new Date());
    const slow = await startEmulator({ key: KEY, events: [], indicators: [], latencyMs: 10_000, emptyAs: 'null', now });
    const before = clockReads;
    const pending = request(`${slow.url}${EQ}`, {
      method: 'POST',
      headers: BEARER,
      body: JSON.stringify(quake()),
    }).catch((e: unknown) => e);
    // A request reads the clock as it arrives: from then on it is in its latency wait.
    await waitFor(async () => clockReads > before, 5_000, 'the request to arrive', 5);
    const t0 = performance.now();
    await slow.close();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(await pending).toBeInstanceOf(Error);
  });

  it("writes empty lists as null with emptyAs 'null'", async () => {
    const small = await startEmulator({ key: KEY, events: [], indicators: [], emptyAs: 'null' });
    try {
      const r = await request(`${small.url}${EQ}`, { method: 'POST', headers: BEARER, body: JSON.stringify(quake()) });
      const env = envelopeSchema(earthquakeResultSchema).parse(await r.body.json());
      expect(env.data.result.events).toBeNull();
      expect(small.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await small.close();
    }
  });
});
