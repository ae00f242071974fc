import { describe, expect, it } from 'vitest';
import { enqueuedLine } from '../../src/cli/actions/backfill.js';
import {
  controlText,
  formatBackfillList,
  formatControl,
  newestPerStream,
  parseBudgetArgument,
} from '../../src/cli/actions/backfill-control.js';
import { parseMaxBilledCalls } from '../../src/cli/flags.js';
import { haltMessage } from '../../src/cli/session.js';
import { formatDayBudget, formatHold, holdsByStream } from '../../src/cli/status-holds.js';
import { parseEnv } from '../../src/config/env.js';
import type { BackfillSummary } from '../../src/db/queries/backfills.js';
import {
  applyControl,
  BACKFILL_ID_PATTERN,
  haltOf,
  newBackfillId,
  type BackfillSnapshot,
} from '../../src/domain/backfill.js';
import {
  budgetRecheckDelayMs,
  budgetScopes,
  isUsedUp,
  nextUtcMidnightMs,
  refusalOf,
  utcDayOf,
} from '../../src/domain/budget.js';
import { nextState } from '../../src/domain/partition.js';
import {
  BackfillCancelledError,
  BackfillPausedError,
  BudgetExhaustedError,
  ConfigError,
  GatewayError,
} from '../../src/errors.js';
import { describeBackfill, streamKeysOf } from '../../src/ingest/backfills.js';
import { budgetError, controlStop } from '../../src/worker/call.js';
import {
  controlOutcome,
  failureDelayMs,
  MAX_RETRY_DELAY_MS,
  rateLimitDelayMs,
  retryDelayMs,
} from '../../src/worker/run-workers.js';

const NOW = Date.parse('2025-06-01T13:45:00Z');
const MIDNIGHT = Date.parse('2025-06-02T00:00:00Z');

describe('budget scopes and refusals', () => {
  it('reserves in the UTC day, and in the backfill when the call has one (day first: one lock order)', () => {
    expect(budgetScopes(NOW, 100, null)).toEqual([{ scope: 'day', day: '2025-06-01', cap: 100 }]);
    expect(budgetScopes(NOW, null, { id: 'bf-20250601-00ab', maxBilledCalls: 20 })).toEqual([
      { scope: 'day', day: '2025-06-01', cap: null },
      { scope: 'backfill:bf-20250601-00ab', day: '1970-01-01', cap: 20 },
    ]);
    // Without a cap a backfill is still counted, so a cap set later measures what was already spent.
    expect(budgetScopes(NOW, null, { id: 'bf-1', maxBilledCalls: null })[1]!.cap).toBeNull();
  });

  it('the day renews at the next UTC midnight', () => {
    expect(utcDayOf(MIDNIGHT - 1)).toBe('2025-06-01');
    expect(utcDayOf(MIDNIGHT)).toBe('2025-06-02');
    expect(nextUtcMidnightMs(NOW)).toBe(MIDNIGHT);
    expect(nextUtcMidnightMs(MIDNIGHT)).toBe(MIDNIGHT + 86_400_000);
  });

  it('a refusal says what ends it: the next day, or a raised backfill cap', () => {
    expect(refusalOf({ scope: 'day', day: '2025-06-01', cap: 100 }, NOW)).toEqual({
      scope: 'day',
      cap: 100,
      untilMs: MIDNIGHT,
    });
    expect(refusalOf({ scope: 'backfill:bf-x', day: '1970-01-01', cap: 20 }, NOW)).toEqual({
      scope: 'backfill',
      backfillId: 'bf-x',
      cap: 20,
      untilMs: null,
    });
    const day = budgetError({ scope: 'day', day: '2025-06-01', cap: 100 }, NOW);
    expect(day).toBeInstanceOf(BudgetExhaustedError);
    expect([day.scope, day.cap, day.until?.getTime(), day.backfillId]).toEqual(['day', 100, MIDNIGHT, null]);
    const backfill = budgetError({ scope: 'backfill:bf-x', day: '1970-01-01', cap: 20 }, NOW);
    expect([backfill.scope, backfill.cap, backfill.until, backfill.backfillId]).toEqual(['backfill', 20, null, 'bf-x']);
  });

  it('a held job looks again every minute, never past the moment the day renews', () => {
    expect(budgetRecheckDelayMs(null, NOW)).toBe(60_000);
    expect(budgetRecheckDelayMs(MIDNIGHT, NOW)).toBe(60_000);
    expect(budgetRecheckDelayMs(MIDNIGHT, MIDNIGHT - 5_000)).toBe(5_000);
    expect(budgetRecheckDelayMs(MIDNIGHT, MIDNIGHT + 5_000)).toBe(0);
    expect(budgetRecheckDelayMs(null, NOW, 250)).toBe(250);
  });

  it('used up means at or past a cap; no cap is never used up', () => {
    expect(isUsedUp(19, 20)).toBe(false);
    expect(isUsedUp(20, 20)).toBe(true);
    expect(isUsedUp(21, 20)).toBe(true);
    expect(isUsedUp(1_000_000, null)).toBe(false);
  });
});

describe('backfill control', () => {
  it('ids are short, dated and typeable', () => {
    expect(newBackfillId(NOW, 0x3fa2)).toBe('bf-20250601-3fa2');
    expect(newBackfillId(NOW, 7)).toBe('bf-20250601-0007');
    expect(newBackfillId(NOW, 0x1ffff)).toMatch(BACKFILL_ID_PATTERN);
  });

  it('pause and resume toggle; cancel is final', () => {
    expect(applyControl('active', 'pause')).toEqual({ to: 'paused' });
    expect(applyControl('paused', 'resume')).toEqual({ to: 'active' });
    expect(applyControl('active', 'resume')).toEqual({ to: 'active' });
    expect(applyControl('paused', 'cancel')).toEqual({ to: 'cancelled' });
    expect(applyControl('cancelled', 'cancel')).toEqual({ to: 'cancelled' });
    expect(applyControl('cancelled', 'resume')).toHaveProperty('refused');
    expect(applyControl('cancelled', 'pause')).toHaveProperty('refused');
  });

  it('a cancelled partition is failed, and planned again (resuming its frontier) by a later backfill', () => {
    expect(nextState('pending', 'cancelled')).toBe('failed');
    expect(nextState('running', 'cancelled')).toBe('failed');
    expect(nextState('done', 'cancelled')).toBe('done');
    expect(nextState('partial', 'cancelled')).toBe('partial');
    expect(nextState(nextState('running', 'cancelled'), 'planned')).toBe('pending');
  });

  it('each call boundary stops a paused or cancelled backfill, and nothing else', () => {
    expect(controlStop(null, null)).toBeNull();
    expect(controlStop('bf-x', null)).toBeNull();
    expect(controlStop('bf-x', 'active')).toBeNull();
    expect(controlStop('bf-x', 'paused')).toBeInstanceOf(BackfillPausedError);
    expect(controlStop('bf-x', 'cancelled')).toBeInstanceOf(BackfillCancelledError);
  });

  it('the worker holds a job at a budget, drops it when paused, cancels its partition when cancelled; other errors are not its business', () => {
    const day = new BudgetExhaustedError('day', 100, new Date(MIDNIGHT), null);
    expect(controlOutcome(day, MIDNIGHT - 1_000)).toEqual({ kind: 'hold', delayMs: 1_000 });
    expect(controlOutcome(day, NOW)).toEqual({ kind: 'hold', delayMs: 60_000 });
    expect(controlOutcome(new BudgetExhaustedError('backfill', 20, null, 'bf-x'), NOW, 500)).toEqual({
      kind: 'hold',
      delayMs: 500,
    });
    expect(controlOutcome(new BackfillPausedError('bf-x'), NOW)).toEqual({ kind: 'drop' });
    expect(controlOutcome(new BackfillCancelledError('bf-x'), NOW)).toMatchObject({ kind: 'cancel' });
    expect(controlOutcome(new GatewayError('server', 'boom'), NOW)).toBeNull();
    expect(controlOutcome(new Error('x'), NOW)).toBeNull();
  });
});

describe('what holds a backfill (--wait)', () => {
  const base: BackfillSnapshot = {
    control: 'active',
    maxBilledCalls: 20,
    used: 5,
    dayUsed: 5,
    dayCap: null,
    nextDayMs: MIDNIGHT,
    jobsRunning: false,
  };

  it('paused and cancelled hold at once', () => {
    expect(haltOf({ ...base, control: 'paused' })).toEqual({ kind: 'paused' });
    expect(haltOf({ ...base, control: 'cancelled', jobsRunning: true })).toEqual({ kind: 'cancelled' });
  });

  it('a used-up budget holds once no job of it runs any more (a running one may finish it with the last unit)', () => {
    expect(haltOf(base)).toBeNull();
    expect(haltOf({ ...base, used: 20, jobsRunning: true })).toBeNull();
    expect(haltOf({ ...base, used: 20 })).toEqual({ kind: 'budget', scope: 'backfill', used: 20, cap: 20 });
    expect(haltOf({ ...base, maxBilledCalls: null, used: 500 })).toBeNull();
    expect(haltOf({ ...base, dayCap: 10, dayUsed: 10 })).toEqual({
      kind: 'budget',
      scope: 'day',
      used: 10,
      cap: 10,
      untilMs: MIDNIGHT,
    });
  });

  it('says which, and how to go on', () => {
    expect(haltMessage({ kind: 'budget', scope: 'backfill', used: 20, cap: 20 }, 'bf-x')).toBe(
      'paused by budget: 20 of 20 billed calls; raise with `gateway-ingest backfill budget bf-x N` (or `backfill resume bf-x --max-billed-calls N`)',
    );
    expect(haltMessage({ kind: 'budget', scope: 'day', used: 10, cap: 10, untilMs: MIDNIGHT }, 'bf-x')).toMatch(
      /^paused by budget: 10 of 10 .*BILLED_CALLS_PER_DAY.*2025-06-02T00:00:00Z/,
    );
    expect(haltMessage({ kind: 'paused' }, 'bf-x')).toBe(
      'paused by user: `gateway-ingest backfill resume bf-x` continues it',
    );
    expect(haltMessage({ kind: 'cancelled' }, 'bf-x')).toMatch(/^cancelled: /);
  });
});

describe('backfill commands', () => {
  it('--max-billed-calls and budget take a positive whole number (budget also `none`)', () => {
    expect(parseMaxBilledCalls('--max-billed-calls', undefined)).toBeNull();
    expect(parseMaxBilledCalls('--max-billed-calls', '20')).toBe(20);
    for (const bad of ['0', '-1', '1.5', 'x', '', '99999999999'])
      expect(() => parseMaxBilledCalls('--max-billed-calls', bad)).toThrow(/--max-billed-calls/);
    expect(parseBudgetArgument('none')).toBeNull();
    expect(parseBudgetArgument('40')).toBe(40);
  });

  it('a stream stands for its newest backfill; each backfill is named once', () => {
    const newestFirst = [
      { id: 'bf-3', streamKeys: ['indicator:A:US'] },
      { id: 'bf-2', streamKeys: ['indicator:A:US', 'indicator:A:DE'] },
      { id: 'bf-1', streamKeys: ['earthquake:all'] },
    ];
    expect(newestPerStream(['indicator:A:US', 'indicator:A:DE'], newestFirst)).toEqual(['bf-3', 'bf-2']);
    expect(newestPerStream(['earthquake:all'], newestFirst)).toEqual(['bf-1']);
    expect(newestPerStream(['earthquake:m4'], newestFirst)).toEqual([]);
  });

  it('names what a backfill covers, and its streams', () => {
    const quake = {
      operation: 'earthquake' as const,
      filters: { minMagnitude: 2.5, circle: null },
      fromMs: Date.parse('2025-05-01T00:00:00Z'),
      toMs: Date.parse('2025-06-10T00:00:00Z'),
    };
    expect(describeBackfill(quake)).toBe(
      'earthquakes 2025-05-01T00:00:00Z..2025-06-10T00:00:00Z, magnitude >= 2.5, worldwide',
    );
    expect(streamKeysOf(quake)).toEqual(['earthquake:m2.5']);
    const series = {
      operation: 'indicator' as const,
      indicators: ['SP.POP.TOTL'],
      countries: ['US', 'WLD'],
      fromYear: 1960,
      toYear: 2024,
      streamName: 'macro',
    };
    expect(describeBackfill(series)).toBe('stream macro: indicators SP.POP.TOTL x US,WLD 1960..2024');
    expect(streamKeysOf(series)).toEqual(['indicator:SP.POP.TOTL:US', 'indicator:SP.POP.TOTL:WLD']);
  });

  it('prints the id when enqueued', () => {
    const summary = { streamKey: 'earthquake:all', planned: 2, added: 2, alreadyQueued: 0, partitionKeys: ['a', 'b'] };
    expect(enqueuedLine('bf-20250601-3fa2', [summary], 20)).toBe(
      'backfill bf-20250601-3fa2: 2 partitions enqueued, at most 20 billed calls; `gateway-ingest backfill pause|resume|cancel bf-20250601-3fa2` controls it',
    );
    expect(enqueuedLine('bf-x', [{ ...summary, planned: 0 }], null)).toBe('backfill bf-x: nothing to fetch');
  });

  const summary = (over: Partial<BackfillSummary> = {}): BackfillSummary => ({
    id: 'bf-20250601-3fa2',
    operation: 'earthquake',
    description: 'earthquakes 2025-05-01T00:00:00Z..2025-06-10T00:00:00Z, any magnitude, worldwide',
    control: 'active',
    maxBilledCalls: 20,
    budgetUsed: 20,
    billedCalls: 20,
    partitions: { total: 2, done: 1, partial: 0, failed: 0, unfinished: 1 },
    streamKeys: ['earthquake:all'],
    createdAt: new Date(NOW),
    ...over,
  });

  it('list shows control (paused by budget is derived), partitions, billed calls and budget', () => {
    expect(controlText(summary())).toBe('paused by budget');
    expect(controlText(summary({ budgetUsed: 3 }))).toBe('active');
    expect(controlText(summary({ control: 'paused' }))).toBe('paused');
    expect(controlText(summary({ partitions: { total: 2, done: 2, partial: 0, failed: 0, unfinished: 0 } }))).toBe(
      'finished',
    );
    expect(formatBackfillList([summary()])).toBe(
      'bf-20250601-3fa2  paused by budget  created 2025-06-01T13:45:00Z\n' +
        '  earthquakes 2025-05-01T00:00:00Z..2025-06-10T00:00:00Z, any magnitude, worldwide\n' +
        '  partitions: 1 of 2 done; billed calls: 20; budget: 20 of 20 used\n',
    );
    expect(formatBackfillList([])).toBe('no backfills yet\n');
  });

  it('control commands say what they did', () => {
    const backfill = {
      id: 'bf-x',
      operation: 'earthquake' as const,
      description: '',
      streamKeys: [],
      maxBilledCalls: null,
      control: 'paused' as const,
      createdAt: new Date(NOW),
      updatedAt: new Date(NOW),
    };
    expect(formatControl('pause', { backfill, removed: 3, running: 1, cancelled: 0, requeued: 0 })).toMatch(
      /^backfill bf-x: paused; 3 queued jobs taken off, 1 running stop before their next call/,
    );
    expect(formatControl('cancel', { backfill, removed: 3, running: 1, cancelled: 3, requeued: 0 })).toMatch(
      /3 partitions marked cancelled, 1 running finish their current call and stop/,
    );
    expect(
      formatControl('resume', {
        backfill: { ...backfill, maxBilledCalls: 40 },
        removed: 0,
        running: 0,
        cancelled: 0,
        requeued: 4,
      }),
    ).toBe('backfill bf-x: active (max 40 billed calls); 4 partitions queued again');
  });
});

describe('status: what holds a stream', () => {
  const group = {
    streamKey: 'earthquake:all',
    backfillId: 'bf-x',
    control: 'active',
    maxBilledCalls: 20,
    budgetUsed: 20,
    unfinished: 3,
  };
  const day = { day: '2025-06-01', used: 5, cap: null, untilMs: MIDNIGHT };

  it('a backfill at its cap, a paused one, and the day budget', () => {
    expect(holdsByStream([group], day).get('earthquake:all')).toEqual([
      { kind: 'budget', scope: 'backfill', backfillId: 'bf-x', used: 20, cap: 20, until: null, partitions: 3 },
    ]);
    expect(holdsByStream([{ ...group, control: 'paused' }], day).get('earthquake:all')).toEqual([
      { kind: 'paused', backfillId: 'bf-x', partitions: 3 },
    ]);
    expect(holdsByStream([{ ...group, budgetUsed: 2 }], day).size).toBe(0);
    const dayUsedUp = { ...day, used: 10, cap: 10 };
    expect(
      holdsByStream(
        [{ ...group, backfillId: null, control: null, maxBilledCalls: null, budgetUsed: 0 }],
        dayUsedUp,
      ).get('earthquake:all'),
    ).toEqual([{ kind: 'budget', scope: 'day', used: 10, cap: 10, until: '2025-06-02T00:00:00Z', partitions: 3 }]);
  });

  it('prints "paused by budget until ..." and the day budget', () => {
    expect(
      formatHold({ kind: 'budget', scope: 'day', used: 10, cap: 10, until: '2025-06-02T00:00:00Z', partitions: 3 }),
    ).toBe(
      '  paused by budget until 2025-06-02T00:00:00Z: 10 of 10 billed calls of BILLED_CALLS_PER_DAY used today (3 partitions waiting)',
    );
    expect(
      formatHold({
        kind: 'budget',
        scope: 'backfill',
        backfillId: 'bf-x',
        used: 20,
        cap: 20,
        until: null,
        partitions: 1,
      }),
    ).toMatch(/^ {2}paused by budget until raised: backfill bf-x used 20 of 20 billed calls \(1 partition waiting;/);
    expect(formatHold({ kind: 'paused', backfillId: 'bf-x', partitions: 2 })).toMatch(/^ {2}paused: backfill bf-x/);
    expect(formatDayBudget({ ...day, used: 4, cap: 10 })).toBe(
      'day budget (UTC 2025-06-01): 4 of 10 billed calls used, 6 left',
    );
    expect(formatDayBudget({ ...day, used: 10, cap: 10 })).toBe(
      'day budget (UTC 2025-06-01): 10 of 10 billed calls used: used up, paused by budget until 2025-06-02T00:00:00Z',
    );
    expect(formatDayBudget(day)).toMatch(/no daily cap/);
  });
});

describe('environment', () => {
  it('BILLED_CALLS_PER_DAY is an optional positive whole number', () => {
    expect(parseEnv({}).billedCallsPerDay).toBeNull();
    expect(parseEnv({ BILLED_CALLS_PER_DAY: '500' }).billedCallsPerDay).toBe(500);
    for (const bad of ['0', '-3', '1.5', 'lots'])
      expect(() => parseEnv({ BILLED_CALLS_PER_DAY: bad })).toThrow(/BILLED_CALLS_PER_DAY/);
  });

  it('DASHBOARD_TOKEN is at least 16 visible ASCII characters, and never echoed', () => {
    expect(parseEnv({}).dashboardToken).toBeNull();
    expect(parseEnv({ DASHBOARD_TOKEN: 'abcdefghijklmnop' }).dashboardToken).toBe('abcdefghijklmnop');
    for (const bad of ['short-token', 'has a space in it here', 'ünïcödé-tôkén-lóng']) {
      expect(() => parseEnv({ DASHBOARD_TOKEN: bad })).toThrow(ConfigError);
      try {
        parseEnv({ DASHBOARD_TOKEN: bad });
      } catch (e) {
        expect((e as Error).message).toMatch(/DASHBOARD_TOKEN: must be at least 16 visible ASCII characters/);
        expect((e as Error).message).not.toContain(bad);
      }
    }
  });
});

describe('retry delay from the failures in a row (BullMQ exponential strategy with jitter)', () => {
  it('doubles with each failure in a row, between half and all of base x 2^(n-1), capped', () => {
    for (const n of [1, 2, 3, 6]) {
      const full = 100 * 2 ** (n - 1);
      for (let i = 0; i < 50; i++) {
        const ms = retryDelayMs(n, 100);
        expect(ms).toBeGreaterThanOrEqual(full / 2);
        expect(ms).toBeLessThanOrEqual(full);
      }
    }
    expect(retryDelayMs(10_000, 100)).toBe(MAX_RETRY_DELAY_MS);
    // A count of zero (no failure recorded yet) waits like the first failure.
    expect(retryDelayMs(0, 100)).toBeLessThanOrEqual(100);
  });
});

describe('the wait after a 429', () => {
  it("is the gateway's Retry-After up to the longest backoff, so a quota's day never holds the queue a day", () => {
    expect(rateLimitDelayMs(1_000)).toBe(1_000);
    expect(rateLimitDelayMs(MAX_RETRY_DELAY_MS)).toBe(MAX_RETRY_DELAY_MS);
    expect(rateLimitDelayMs(86_400_000)).toBe(MAX_RETRY_DELAY_MS);
    expect(rateLimitDelayMs(1e30)).toBe(MAX_RETRY_DELAY_MS);
    expect(rateLimitDelayMs(-5)).toBe(0);
  });
});

describe('the wait after a failed call that says when to come back (a 503 with Retry-After)', () => {
  it('is the longer of the backoff and the Retry-After, capped like a 429', () => {
    expect(failureDelayMs(1, 100, null)).toBeLessThanOrEqual(100);
    expect(failureDelayMs(1, 100, 30_000)).toBe(30_000);
    expect(failureDelayMs(1, 100, 86_400_000)).toBe(MAX_RETRY_DELAY_MS);
    expect(failureDelayMs(30, 100, 5)).toBe(MAX_RETRY_DELAY_MS);
  });
});
