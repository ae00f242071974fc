import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseJobsFile } from '../../src/config/jobs-file.js';
import type { StreamStatus } from '../../src/db/queries/status.js';
import { PARTITION_STATE as S, type PartitionState } from '../../src/domain/partition.js';
import type { Range } from '../../src/domain/ranges.js';
import { DAY_MS } from '../../src/domain/time.js';
import { checkToken, cookieValue, TOKEN_COOKIE } from '../../src/service/dashboard/auth.js';
import { billedChartSvg, niceCeil, timelineSvg } from '../../src/service/dashboard/charts.js';
import { escapeHtml, html } from '../../src/service/dashboard/html.js';
import { buildPageModel, buildTimeline, dayBars, type PageInputs } from '../../src/service/dashboard/model.js';
import { declaredStreams } from '../../src/service/declared-streams.js';
import { formatAge, renderStatusPage } from '../../src/service/dashboard/page.js';
import { createServiceMetrics, newestDataMs } from '../../src/service/metrics.js';
import type { AttemptRecord } from '../../src/gateway/attempt.js';
import { failedRecord } from '../support/attempts.js';

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const HOUR = 3_600_000;

const states = (entries: Array<[PartitionState, Range[]]>) => new Map(entries);

function request(headers: Record<string, string>): IncomingMessage {
  return { headers, socket: {} } as unknown as IncomingMessage;
}

function status(streamKey: string, overrides: Partial<StreamStatus> = {}): StreamStatus {
  return {
    streamKey,
    operation: 'earthquake',
    name: null,
    params: null,
    partitions: { done: 1, pending: 0, running: 0, partial: 0, failed: 0 },
    rowsWritten: 3,
    calls: 2,
    billedCalls: 2,
    billedUnknown: 0,
    units: 3,
    billedCallsToday: 1,
    unitsToday: 1,
    lastSuccessAt: new Date(NOW - HOUR),
    lastError: null,
    lastErrorKind: null,
    failedPartitions: [],
    partialPartitions: [],
    ...overrides,
  };
}

function inputs(overrides: Partial<PageInputs> = {}): PageInputs {
  return {
    nowMs: NOW,
    status: [],
    freshness: new Map(),
    errors: new Map(),
    ranges: [],
    file: null,
    daily: [],
    backfills: [],
    dayBudgetUsed: 0,
    billedCallsPerDay: null,
    ...overrides,
  };
}

describe('dashboard html', () => {
  it('escapes every interpolated value, but not markup built by html itself', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"><script>'}">${inner}${['<', 1, null, false]}</p>`.text).toBe(
      '<p title="&quot;&gt;&lt;script&gt;"><b>&lt;i&gt;</b>&lt;1</p>',
    );
  });
});

describe('dashboard timeline', () => {
  it('time: done time is taken out of the other states; gaps are everything not done', () => {
    const t = buildTimeline(
      'time',
      { start: 0, end: 100 },
      states([
        [S.done, [{ start: 60, end: 100 }]],
        [S.failed, [{ start: 20, end: 70 }]],
        [S.pending, [{ start: 200, end: 300 }]],
      ]),
    );
    expect(t?.layers.find((l) => l.state === S.failed)?.ranges).toEqual([{ start: 20, end: 60 }]);
    expect(t?.layers.find((l) => l.state === S.pending)?.ranges).toEqual([]);
    expect(t?.gaps).toEqual([{ start: 0, end: 60 }]);
    expect(t?.coveredFraction).toBeCloseTo(0.4);
  });

  it('years: whole years, a failed chunk shows only the years no done chunk holds', () => {
    const t = buildTimeline(
      'year',
      { start: 2015, end: 2026 },
      states([
        [S.done, [{ start: 2015, end: 2020 }]],
        [S.failed, [{ start: 2018, end: 2022 }]],
      ]),
    );
    expect(t?.layers.find((l) => l.state === S.failed)?.ranges).toEqual([{ start: 2021, end: 2022 }]);
    expect(t?.gaps).toEqual([{ start: 2021, end: 2026 }]);
    expect(t?.coveredFraction).toBeCloseTo(6 / 12);
    const svg = timelineSvg(t!).text;
    expect(svg.match(/data-state="failed"/g)).toHaveLength(1);
    expect(svg).toContain('<title>failed (attempts used up): 2021 .. 2022</title>');
  });

  it('nothing to show without a range', () => {
    expect(buildTimeline('time', null, new Map())).toBeNull();
  });
});

describe('dashboard billed chart', () => {
  it('30 UTC days ending today, zero-filled, operations added up', () => {
    const today = '2025-06-15';
    const days = dayBars(
      [
        { day: today, operation: 'earthquake', billedCalls: 3 },
        { day: today, operation: 'indicator', billedCalls: 2 },
        { day: '2025-06-01', operation: 'earthquake', billedCalls: 40 },
        { day: '2025-05-01', operation: 'earthquake', billedCalls: 99 },
      ],
      NOW,
    );
    expect(days).toHaveLength(30);
    expect(days[0]?.day).toBe('2025-05-17');
    expect(days.at(-1)).toEqual({ day: today, byOperation: { earthquake: 3, indicator: 2 }, total: 5 });
    expect(days.find((d) => d.day === '2025-06-01')?.total).toBe(40);
    expect(days.filter((d) => d.total === 0)).toHaveLength(28);
    const svg = billedChartSvg(days, 50).text;
    expect(svg.match(/<g class="bar"/g)).toHaveLength(30);
    expect(svg).toContain('daily cap 50');
    // A cap far above every day is left out rather than flattening the bars.
    expect(billedChartSvg(days, 100_000).text).not.toContain('daily cap');
  });

  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 40, 51, 101, 999].map(niceCeil)).toEqual([1, 1, 5, 50, 100, 200, 1000]);
  });
});

describe('dashboard page', () => {
  it('joins jobs.yaml: declared streams that never ran are listed with their schedule', () => {
    const file = parseJobsFile(
      'earthquakes:\n  - name: quakes\n    every: 10m\n    min_magnitude: 2.5\nindicators:\n  - name: macro\n    indicators: [SP.POP.TOTL]\n    countries: [US, CHN]\n    schedule: "0 4 * * 1"\n',
      'jobs.yaml',
      () => new Date(NOW),
    );
    const declared = declaredStreams(file, 2025);
    expect([...declared.keys()]).toEqual(['earthquake:m2.5', 'indicator:SP.POP.TOTL:US', 'indicator:SP.POP.TOTL:CHN']);
    expect(declared.get('indicator:SP.POP.TOTL:US')).toMatchObject({
      name: 'macro',
      schedule: 'cron "0 4 * * 1" UTC',
      range: { unit: 'year', from: 2016, to: 2025 },
    });
    const model = buildPageModel(inputs({ file }));
    expect(
      model.cards.map((c) => [c.id, c.series.map((s) => s.status.streamKey), c.schedule, c.timeline?.unit ?? null]),
    ).toEqual([
      ['jobs:quakes', ['earthquake:m2.5'], 'every 10m', null],
      ['jobs:macro', ['indicator:SP.POP.TOTL:US', 'indicator:SP.POP.TOTL:CHN'], 'cron "0 4 * * 1" UTC', 'year'],
    ]);
    expect(model.cards.map((c) => c.state)).toEqual(['idle', 'idle']);
  });

  it('renders names and errors from the database as text', () => {
    const evil = status('earthquake:all', {
      name: '<img src=x onerror=alert(1)>',
      partitions: { done: 0, pending: 0, running: 0, partial: 0, failed: 1 },
      failedPartitions: [{ partitionKey: 'w1', error: '</li><script>alert(2)</script>', kind: 'server' }],
      lastError: '</li><script>alert(2)</script>',
    });
    const page = renderStatusPage(
      buildPageModel(
        inputs({
          status: [evil],
          freshness: new Map([
            [
              'earthquake:all',
              {
                newestEventTime: new Date(NOW - 5 * 60_000),
                lastValueYear: null,
                doneWindows: [],
                doneYears: [],
                askedWindows: [],
                proven: [],
                deletedEvents: 0,
                revisedLastDay: 0,
              },
            ],
          ]),
          ranges: [
            {
              streamKey: 'earthquake:all',
              state: S.failed,
              windows: [{ start: NOW - 2 * DAY_MS, end: NOW - DAY_MS }],
              years: [],
            },
          ],
        }),
      ),
    );
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).toContain('newest event 2025-06-15T11:55:00Z (5 min ago)');
    // The newest failed window's error is the stream's last error: listed once.
    expect(page.match(/alert\(2\)/g)).toHaveLength(1);
    expect(page).toContain('No daily cap');
  });

  it('shows what is left of the daily cap', () => {
    const page = renderStatusPage(buildPageModel(inputs({ billedCallsPerDay: 500, dayBudgetUsed: 120 })));
    expect(page).toContain('Today (2025-06-15): 120 used, <strong>380 left</strong>');
  });

  it('ages read as a person would say them', () => {
    expect([5_000, 600_000, 5 * HOUR, 3 * DAY_MS].map(formatAge)).toEqual([
      '5 s ago',
      '10 min ago',
      '5 h ago',
      '3 days ago',
    ]);
  });
});

describe('dashboard token', () => {
  const token = 'a-token-of-sixteen-plus';
  const url = (path: string) => new URL(path, 'http://localhost');

  it('accepts the bearer token or the cookie, and nothing else', () => {
    expect(
      checkToken(request({ authorization: `Bearer ${token}` }), url('/queues/api/queues'), token, '/queues'),
    ).toEqual({ kind: 'allow' });
    expect(checkToken(request({ authorization: 'Bearer nope' }), url('/queues'), token, '/queues')).toEqual({
      kind: 'deny',
    });
    expect(checkToken(request({}), url('/queues'), token, '/queues')).toEqual({ kind: 'deny' });
    expect(
      checkToken(request({ cookie: `a=b; ${TOKEN_COOKIE}=${cookieValue(token)}` }), url('/queues'), token, '/queues'),
    ).toEqual({ kind: 'allow' });
    expect(checkToken(request({ cookie: `${TOKEN_COOKIE}=${token}` }), url('/queues'), token, '/queues')).toEqual({
      kind: 'deny',
    });
    expect(
      checkToken(
        request({ cookie: `${TOKEN_COOKIE}=${cookieValue('other-token-entirely')}` }),
        url('/queues'),
        token,
        '/queues',
      ),
    ).toEqual({ kind: 'deny' });
  });

  it('?token= signs in: a cookie, and the same URL without the token', () => {
    const d = checkToken(
      request({ 'x-forwarded-proto': 'https' }),
      url(`/queues/queue/x?token=${token}&page=2`),
      token,
      '/queues',
    );
    expect(d).toEqual({
      kind: 'sign-in',
      location: '/queues/queue/x?page=2',
      cookie: `${TOKEN_COOKIE}=${cookieValue(token)}; Path=/queues; HttpOnly; SameSite=Strict; Secure`,
    });
    expect(checkToken(request({}), url('/queues?token=wrong'), token, '/queues')).toEqual({ kind: 'deny' });
  });
});

describe('freshness metric', () => {
  it('is the newest event, or the end of the last year holding a value', () => {
    expect(
      newestDataMs({
        newestEventTime: new Date(NOW),
        lastValueYear: null,
      }),
    ).toBe(NOW);
    expect(
      newestDataMs({
        newestEventTime: null,
        lastValueYear: 2016,
      }),
    ).toBe(Date.UTC(2017, 0, 1));
    expect(
      newestDataMs({
        newestEventTime: null,
        lastValueYear: null,
      }),
    ).toBeNull();
  });
});

describe('the metrics of liveness probes', () => {
  const probe = (httpStatus: number | null): AttemptRecord =>
    failedRecord({ httpStatus, errorKind: httpStatus === null ? 'timeout' : 'parameters' }, NOW);

  it('count them apart from calls: their refusal is the answer expected, no alert on parameter errors', async () => {
    const { registry, observer } = createServiceMetrics({ queues: [] });
    observer.onLivenessProbe?.(probe(null));
    observer.onLivenessProbe?.(probe(400));
    const text = await registry.metrics();
    expect(text).toMatch(/gateway_ingest_gateway_liveness_probes_total\{operation="earthquake",answered="false"\} 1/);
    expect(text).toMatch(/gateway_ingest_gateway_liveness_probes_total\{operation="earthquake",answered="true"\} 1/);
    expect(text).not.toMatch(/gateway_ingest_gateway_calls_total\{/);
  });
});
