import { describe, expect, it } from 'vitest';
import { formatStatus, jobsFileLine } from '../../src/cli/actions/status.js';
import { buildStatusReport } from '../../src/cli/status-report.js';
import { parseJobsFile } from '../../src/config/jobs-file.js';
import type { StreamFreshness } from '../../src/db/queries/freshness.js';
import type { StreamStatus } from '../../src/db/queries/status.js';

const NOW = Date.parse('2026-06-15T12:00:00Z');
const JOBS = parseJobsFile(
  `
earthquakes:
  - name: big
    min_magnitude: 5
    every: 10m
    lookback: 2d
    backfill_from: 2026-01-01
  - name: idle
    min_magnitude: 7
    schedule: "0 * * * *"
    enabled: false
indicators:
  - name: gdp
    indicators: [NY.GDP.MKTP.CD]
    countries: [US]
    from_year: 2000
    every: 7d
`,
  'jobs.yaml',
  () => new Date(NOW),
);

const row = (streamKey: string, operation: string, over: Partial<StreamStatus> = {}): StreamStatus => ({
  streamKey,
  operation,
  name: null,
  params: {},
  partitions: { done: 3, pending: 0, running: 0, partial: 0, failed: 1 },
  rowsWritten: 120,
  calls: 9,
  billedCalls: 8,
  billedUnknown: 0,
  units: 120,
  billedCallsToday: 2,
  unitsToday: 10,
  lastSuccessAt: new Date(NOW - 60_000),
  lastError: 'boom',
  lastErrorKind: 'server',
  failedPartitions: [{ partitionKey: '2026-02-01T00:00:00Z/2026-03-01T00:00:00Z', error: 'boom', kind: 'server' }],
  partialPartitions: [],
  ...over,
});

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe('buildStatusReport', () => {
  const freshness = new Map<string, StreamFreshness>([
    [
      'earthquake:m5',
      {
        newestEventTime: new Date('2026-06-15T11:40:00Z'),
        lastValueYear: null,
        doneWindows: [
          { startMs: day('2026-01-01'), endMs: day('2026-02-01') },
          { startMs: day('2026-03-01'), endMs: NOW - 600_000 },
        ],
        doneYears: [],
        askedWindows: [],
        proven: [],
        deletedEvents: 0,
        revisedLastDay: 0,
      },
    ],
    [
      'indicator:NY.GDP.MKTP.CD:US',
      {
        newestEventTime: null,
        lastValueYear: 2024,
        doneWindows: [],
        doneYears: [{ start: 2000, end: 2010 }],
        askedWindows: [],
        proven: [],
        deletedEvents: 0,
        revisedLastDay: 0,
      },
    ],
  ]);
  const rows = [
    row('earthquake:m5', 'earthquake'),
    row('indicator:NY.GDP.MKTP.CD:US', 'indicator', { failedPartitions: [], lastError: null }),
  ];
  const report = buildStatusReport(rows, freshness, JOBS, NOW);

  it('joins schedules, freshness and coverage with gaps since backfill_from', () => {
    expect(report.map((r) => [r.name, r.schedule, r.enabled])).toEqual([
      ['big', 'every 10m', true],
      ['gdp', 'every 7d', true],
      ['idle', 'cron "0 * * * *" UTC', false],
    ]);
    expect(report[0]!.coverage).toMatchObject({
      unit: 'time',
      from: '2026-01-01T00:00:00Z',
      gaps: [
        { from: '2026-02-01T00:00:00Z', to: '2026-03-01T00:00:00Z' },
        { from: '2026-06-15T11:50:00Z', to: '2026-06-15T12:00:00Z' },
      ],
    });
    expect(report[1]!.coverage).toMatchObject({ unit: 'year', from: 2000, to: 2026, gaps: [{ from: 2011, to: 2026 }] });
    expect(report[1]!.freshness).toEqual({ lastValueYear: 2024 });
    expect(report[2]).toMatchObject({
      streamKey: 'earthquake:m7',
      calls: 0,
      coverage: null,
      freshness: { newestEventTime: null },
    });
  });

  it('prints each stream with its gaps and failed windows', () => {
    const text = formatStatus(report);
    expect(text).toContain(
      [
        'big (earthquake:m5)',
        '  schedule: every 10m',
        '  last success: 2026-06-15T11:59:00.000Z',
        '  freshness: newest event 2026-06-15T11:40:00.000Z',
        '  coverage 2026-01-01T00:00:00Z .. now: 83.07%, 2 gaps',
        '    gap 2026-02-01T00:00:00Z .. 2026-03-01T00:00:00Z',
        '    gap 2026-06-15T11:50:00Z .. now',
        '  catalog changes: 0 events marked deleted, 0 revised in the last day',
        '  partitions: 3 done, 0 pending, 0 running, 1 failed',
        '  rows written: 120; calls: 9, billed 8 (120 units), today 2 (10 units)',
        '  last error: [server] boom',
        '  failed 2026-02-01T00:00:00Z/2026-03-01T00:00:00Z: [server] boom',
      ].join('\n'),
    );
    expect(text).toContain('  coverage 2000 .. 2026: 40.74%, 1 gap\n    gap 2011 .. 2026\n');
    expect(text).toContain('idle (earthquake:m7)\n  schedule: cron "0 * * * *" UTC (disabled)\n');
    expect(text).toContain('  coverage: nothing ingested yet');
  });
});

describe('status counts what it cannot know separately', () => {
  it('calls whose answer was never recorded are reported as billed unknown, apart from the billed ones', () => {
    const text = formatStatus(
      buildStatusReport([row('earthquake:all', 'earthquake', { billedUnknown: 3 })], new Map(), null, NOW),
    );
    expect(text).toContain('billed 8 (120 units), billed unknown 3 (answer never recorded)');
    expect(formatStatus(buildStatusReport([row('earthquake:all', 'earthquake')], new Map(), null, NOW))).not.toContain(
      'billed unknown',
    );
  });
});

describe('status is about what was asked', () => {
  const adhoc = (asked: Array<[string, string]>, done: Array<[string, string]>): StreamFreshness => ({
    newestEventTime: null,
    lastValueYear: null,
    doneWindows: done.map(([a, b]) => ({ startMs: day(a), endMs: day(b) })),
    doneYears: [],
    askedWindows: asked.map(([a, b]) => ({ startMs: day(a), endMs: day(b) })),
    proven: [],
    deletedEvents: 0,
    revisedLastDay: 0,
  });

  it('a finished ad-hoc backfill is covered over the range it asked for, not up to now', () => {
    const f = new Map([['earthquake:all', adhoc([['2025-05-01', '2025-09-30']], [['2025-05-01', '2025-09-30']])]]);
    const [r] = buildStatusReport([row('earthquake:all', 'earthquake')], f, null, NOW);
    expect(r!.coverage).toEqual({
      unit: 'time',
      from: '2025-05-01T00:00:00Z',
      to: '2025-09-30T00:00:00Z',
      untilNow: false,
      coveredFraction: 1,
      gaps: [],
    });
  });

  it('two ranges asked apart: the time between them is no gap; a window not done is', () => {
    const asked: Array<[string, string]> = [
      ['2025-01-01', '2025-02-01'],
      ['2025-05-01', '2025-06-01'],
    ];
    const f = new Map([['earthquake:all', adhoc(asked, [['2025-01-01', '2025-02-01']])]]);
    const [r] = buildStatusReport([row('earthquake:all', 'earthquake')], f, null, NOW);
    expect(r!.coverage).toMatchObject({
      coveredFraction: 0.5,
      gaps: [{ from: '2025-05-01T00:00:00Z', to: '2025-06-01T00:00:00Z' }],
    });
  });

  it('names the jobs file it read, or that it read none', () => {
    expect(jobsFileLine(JOBS, false)).toBe(
      'jobs file: jobs.yaml (3 streams declared, found in the current directory; --config names another)',
    );
    expect(jobsFileLine(null, false)).toBe('jobs file: none (no ./jobs.yaml here; --config names one)');
    expect(formatStatus([], undefined, jobsFileLine(null, false))).toMatch(/^jobs file: none/);
  });
});
