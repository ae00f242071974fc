import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJobsFile } from '../../src/config/jobs-file.js';
import type { StreamFreshness } from '../../src/db/queries/freshness.js';
import type { StreamStatus } from '../../src/db/queries/status.js';
import { PARTITION_STATE as S } from '../../src/domain/partition.js';
import { packageRoot } from '../../src/paths.js';
import {
  CARD_STATE as C,
  CARD_STATE_ORDER,
  cardError,
  groupCards,
  listedElsewhere,
  newestError,
  partState,
  worstState,
} from '../../src/service/dashboard/cards.js';
import { buildPageModel, buildTimeline, combineTimelines, type PageInputs } from '../../src/service/dashboard/model.js';
import { renderStatusPage } from '../../src/service/dashboard/page.js';
import type { ExecutionError, StreamErrors } from '../../src/service/dashboard/queries.js';
import { declaredStreamList } from '../../src/service/declared-streams.js';

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);
const HOUR = 3_600_000;
const counts = (o: Partial<StreamStatus['partitions']> = {}) => ({
  done: 0,
  pending: 0,
  running: 0,
  partial: 0,
  failed: 0,
  ...o,
});

/** The repository's own jobs.yaml: its `macro` stream is 2 indicators x 5 countries. */
const REPO_JOBS = parseJobsFile(readFileSync(join(packageRoot, 'jobs.yaml'), 'utf8'), 'jobs.yaml', () => new Date(NOW));
const MACRO = declaredStreamList(REPO_JOBS, 2025).find((s) => s.name === 'macro')!;

function status(streamKey: string, o: Partial<StreamStatus> = {}): StreamStatus {
  return {
    streamKey,
    operation: streamKey.split(':')[0]!,
    name: null,
    params: null,
    partitions: counts({ done: 2 }),
    rowsWritten: 10,
    calls: 3,
    billedCalls: 2,
    billedUnknown: 0,
    units: 0.1,
    billedCallsToday: 1,
    unitsToday: 0.1,
    lastSuccessAt: new Date(NOW - 2 * HOUR),
    lastError: null,
    lastErrorKind: null,
    failedPartitions: [],
    partialPartitions: [],
    ...o,
  };
}

function freshness(o: Partial<StreamFreshness> = {}): StreamFreshness {
  return {
    newestEventTime: null,
    lastValueYear: 2024,
    doneWindows: [],
    doneYears: [{ start: 1960, end: 2025 }],
    askedWindows: [],
    proven: [],
    deletedEvents: 0,
    revisedLastDay: 0,
    ...o,
  };
}

function error(
  streamKey: string,
  atMs: number,
  overcameAtMs: number | null,
  detail = 'gateway answered 500',
): ExecutionError {
  return {
    streamKey,
    partitionKey: `${streamKey}:1960-2025`,
    error: detail,
    kind: 'server',
    at: new Date(atMs),
    overcameAt: overcameAtMs === null ? null : new Date(overcameAtMs),
  };
}

function inputs(o: Partial<PageInputs> = {}): PageInputs {
  return {
    nowMs: NOW,
    status: [],
    freshness: new Map(),
    errors: new Map(),
    ranges: [],
    file: REPO_JOBS,
    daily: [],
    backfills: [],
    dayBudgetUsed: 0,
    billedCallsPerDay: null,
    ...o,
  };
}

/** Every series of `macro` ingested, one of them after a failed call that its retry overcame. */
function macroAllDone(): Partial<PageInputs> {
  const [first] = MACRO.streamKeys;
  const errors = new Map<string, StreamErrors>([
    [first!, { lastError: error(first!, NOW - 3 * HOUR, NOW - 3 * HOUR + 1_500), retrying: 0, retryingListed: [] }],
  ]);
  return {
    status: MACRO.streamKeys.map((k) => status(k, { operation: 'indicator' })),
    freshness: new Map(MACRO.streamKeys.map((k) => [k, freshness()])),
    errors,
  };
}

describe('card states', () => {
  it('are ordered failed > retrying > partial > running > queued > done > nothing planned', () => {
    expect(CARD_STATE_ORDER).toEqual(['failed', 'retrying', 'partial', 'running', 'pending', 'done', 'idle']);
    expect(worstState([C.done, C.running, C.pending])).toBe(C.running);
    expect(worstState([C.partial, C.retrying, C.done])).toBe(C.retrying);
    expect(worstState([C.done, C.failed])).toBe(C.failed);
    expect(worstState([])).toBe(C.idle);
  });

  it("a part's state is the worst of its partitions; retrying ones count before partial", () => {
    expect(partState(counts({ done: 5, failed: 1, running: 1 }), 1)).toBe(C.failed);
    expect(partState(counts({ done: 5, running: 1, partial: 1 }), 1)).toBe(C.retrying);
    expect(partState(counts({ done: 5, running: 1, partial: 1 }), 0)).toBe(C.partial);
    expect(partState(counts({ done: 5, running: 1, pending: 2 }), 0)).toBe(C.running);
    expect(partState(counts({ done: 5, pending: 2 }), 0)).toBe(C.pending);
    expect(partState(counts({ done: 5 }), 0)).toBe(C.done);
    expect(partState(counts(), 0)).toBe(C.idle);
  });
});

describe('card grouping', () => {
  it('one card per stream of the repository jobs.yaml; macro holds every country x indicator', () => {
    const groups = groupCards(declaredStreamList(REPO_JOBS, 2025), []);
    expect(groups.map((g) => [g.id, g.origin, g.streamKeys.length])).toEqual([
      ['jobs:global-m2_5', 'jobs', 1],
      ['jobs:california', 'jobs', 1],
      ['jobs:macro', 'jobs', 10],
    ]);
    expect(MACRO.streamKeys).toEqual([
      'indicator:NY.GDP.MKTP.CD:US',
      'indicator:NY.GDP.MKTP.CD:CHN',
      'indicator:NY.GDP.MKTP.CD:WLD',
      'indicator:NY.GDP.MKTP.CD:DEU',
      'indicator:NY.GDP.MKTP.CD:IND',
      'indicator:SP.POP.TOTL:US',
      'indicator:SP.POP.TOTL:CHN',
      'indicator:SP.POP.TOTL:WLD',
      'indicator:SP.POP.TOTL:DEU',
      'indicator:SP.POP.TOTL:IND',
    ]);
  });

  it('keys no stream reads get their own cards: one per earthquake key, one per indicator code', () => {
    const file = parseJobsFile(
      'indicators:\n  - name: a\n    indicators: [X.ONE]\n    countries: [US]\n    every: 1d\n  - name: b\n    indicators: [X.ONE]\n    countries: [US, DE]\n    every: 1d\n',
      'jobs.yaml',
      () => new Date(NOW),
    );
    const known = [
      { streamKey: 'indicator:X.ONE:US', operation: 'indicator' },
      { streamKey: 'indicator:X.TWO:FR', operation: 'indicator' },
      { streamKey: 'earthquake:m5', operation: 'earthquake' },
      { streamKey: 'indicator:X.TWO:US', operation: 'indicator' },
      { streamKey: 'earthquake:all', operation: 'earthquake' },
    ];
    const groups = groupCards(declaredStreamList(file, 2025), known);
    expect(groups.map((g) => [g.id, g.origin, g.title, g.streamKeys])).toEqual([
      // A key two streams share shows in both.
      ['jobs:a', 'jobs', 'a', ['indicator:X.ONE:US']],
      ['jobs:b', 'jobs', 'b', ['indicator:X.ONE:US', 'indicator:X.ONE:DE']],
      ['ad-hoc:earthquake:all', 'ad-hoc', 'earthquake:all', ['earthquake:all']],
      ['ad-hoc:earthquake:m5', 'ad-hoc', 'earthquake:m5', ['earthquake:m5']],
      ['ad-hoc:indicator:X.TWO', 'ad-hoc', 'X.TWO', ['indicator:X.TWO:FR', 'indicator:X.TWO:US']],
    ]);
  });
});

describe('error currency', () => {
  const k = 'indicator:X:US';

  it('an error a later success overcame is resolved, with when, even while something else fails', () => {
    for (const failing of [false, true])
      expect(cardError(error(k, 1_000, 5_000), failing)).toMatchObject({
        currency: 'resolved',
        overcameAt: new Date(5_000),
        at: new Date(1_000),
      });
  });

  it('an error nothing overcame is current only while something in the card is failed or retrying', () => {
    expect(cardError(error(k, 1_000, null), true)).toMatchObject({
      currency: 'current',
      error: 'gateway answered 500',
    });
    expect(cardError(error(k, 1_000, null), false)).toBeNull();
    expect(cardError(null, true)).toBeNull();
  });

  it("the card's error is the newest of its parts'", () => {
    expect(
      newestError([null, error('a', 2_000, null), error('b', 3_000, 4_000), error('c', 1_000, null)])?.streamKey,
    ).toBe('b');
    expect(newestError([null])).toBeNull();
  });

  it('an error already listed with its failed or retrying partition is not listed twice', () => {
    const e = error(k, 1_000, null);
    expect(listedElsewhere(e, [{ streamKey: k, partitionKey: e.partitionKey!, error: 'other' }])).toBe(true);
    expect(listedElsewhere(e, [{ streamKey: 'x', partitionKey: 'y', error: e.error }])).toBe(true);
    expect(listedElsewhere(e, [{ streamKey: 'x', partitionKey: 'y', error: null }])).toBe(false);
  });
});

describe('combined timeline', () => {
  it('a year is ingested only where every series has it; states show wherever any series is in them', () => {
    const range = { start: 2000, end: 2009 };
    const a = buildTimeline(
      'year',
      range,
      new Map([
        [S.done, [{ start: 2000, end: 2009 }]],
        [S.failed, []],
      ]),
    )!;
    const b = buildTimeline(
      'year',
      range,
      new Map([
        [S.done, [{ start: 2000, end: 2004 }]],
        [S.failed, [{ start: 2005, end: 2006 }]],
        [S.pending, [{ start: 2007, end: 2009 }]],
      ]),
    )!;
    const t = combineTimelines([a, b])!;
    expect(t.layers.find((l) => l.state === S.done)?.ranges).toEqual([{ start: 2000, end: 2004 }]);
    expect(t.layers.find((l) => l.state === S.failed)?.ranges).toEqual([{ start: 2005, end: 2006 }]);
    expect(t.layers.find((l) => l.state === S.pending)?.ranges).toEqual([{ start: 2007, end: 2009 }]);
    expect(t.gaps).toEqual([{ start: 2005, end: 2009 }]);
    // 10 + 5 series-years of 20.
    expect(t.coveredFraction).toBeCloseTo(0.75);
    expect(combineTimelines([a])).toBe(a);
    expect(combineTimelines([])).toBeNull();
  });
});

describe('status page cards', () => {
  it('macro is one card: its 10 series summed, ingested, the error a retry overcame shown as resolved', () => {
    const model = buildPageModel(inputs(macroAllDone()));
    expect(model.cards.map((c) => [c.id, c.origin, c.state])).toEqual([
      ['jobs:global-m2_5', 'jobs', C.idle],
      ['jobs:california', 'jobs', C.idle],
      ['jobs:macro', 'jobs', C.done],
    ]);
    const macro = model.cards.find((c) => c.id === 'jobs:macro')!;
    expect(macro.series).toHaveLength(10);
    expect(macro.partitions).toEqual({ ...counts({ done: 20 }), retrying: 0, total: 20 });
    expect(macro.totals).toMatchObject({ rowsWritten: 100, calls: 30, billedCalls: 20, billedCallsToday: 10 });
    expect(macro.totals.units).toBeCloseTo(1);
    expect(macro.schedule).toBe('cron "0 4 * * 1" UTC');
    expect(macro.freshness).toEqual({ kind: 'year', newest: 2024, oldest: 2024, withoutValue: 0 });
    expect(macro.timeline?.range).toEqual({ start: 1960, end: 2025 });
    expect(macro.timeline?.coveredFraction).toBe(1);
    expect(macro.error).toMatchObject({ currency: 'resolved', overcameAt: new Date(NOW - 3 * HOUR + 1_500) });

    const page = renderStatusPage(model);
    expect(page.match(/<article class="card stream"/g)).toHaveLength(3);
    const card = page.slice(page.indexOf('data-card="jobs:macro"'));
    expect(card).toContain('data-stream="macro"');
    expect(card).toContain('20 of 20 ingested');
    expect(card).toContain('<p class="resolved" data-overcame-at="2025-06-15T09:00:01.500Z">');
    expect(card).toContain('was overcome by a later success at 2025-06-15T09:00:01.500Z');
    expect(card).not.toContain('class="current"');
    expect(card).not.toContain('class="problems"');
  });

  it('a retrying series makes the card retrying and its unresolved error current', () => {
    const base = macroAllDone();
    const key = MACRO.streamKeys[3]!;
    const retry = {
      streamKey: key,
      partitionKey: 'p-retry',
      error: 'connection reset',
      kind: 'network',
      since: new Date(NOW - 60_000),
    };
    const errors = new Map(base.errors);
    errors.set(key, {
      lastError: { ...error(key, NOW - 60_000, null, 'connection reset'), partitionKey: 'p-retry' },
      retrying: 1,
      retryingListed: [retry],
    });
    const statuses = base.status!.map((s) =>
      s.streamKey === key ? { ...s, partitions: counts({ done: 1, running: 1 }) } : s,
    );
    const model = buildPageModel(inputs({ ...base, status: statuses, errors }));
    const macro = model.cards.find((c) => c.id === 'jobs:macro')!;
    expect(macro.state).toBe(C.retrying);
    expect(macro.series.find((s) => s.status.streamKey === key)?.state).toBe(C.retrying);
    expect(macro.partitions).toMatchObject({ done: 19, running: 1, retrying: 1, total: 20 });
    expect(macro.error).toMatchObject({ currency: 'current', error: 'connection reset' });
    const card = renderStatusPage(model).split('data-card="jobs:macro"')[1]!;
    expect(card).toContain('(1 of them retrying)');
    expect(card).toContain(`<li class="current">retrying <code>${key}</code> <code>p-retry</code>`);
    // Its error is the retrying partition's: listed once.
    expect(card.match(/connection reset/g)).toHaveLength(1);
  });

  it('keys not in jobs.yaml are labelled so, under their own heading', () => {
    const model = buildPageModel(
      inputs({ file: null, status: [status('earthquake:m7', { name: 'old-stream' })], freshness: new Map() }),
    );
    expect(model.cards.map((c) => [c.id, c.origin, c.title])).toEqual([
      ['ad-hoc:earthquake:m7', 'ad-hoc', 'old-stream'],
    ]);
    const page = renderStatusPage(model);
    expect(page).toContain('<h2 id="ad-hoc">Not in jobs.yaml</h2>');
    expect(page).toMatch(/data-card="ad-hoc:earthquake:m7" data-origin="ad-hoc"/);
    expect(page).toContain('>not in jobs.yaml</span>');
  });
});
