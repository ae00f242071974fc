/**
 * The checks the fault scenarios end with, on hand-made logs: a check that cannot fail proves
 * nothing, so each kind of wrong audit, lost event and double payment must be caught here first.
 */
import { describe, expect, it } from 'vitest';
import type { EmulatorCall } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { reconcile, type AuditRow } from './support/audit-reconcile.js';
import { caughtBy } from './support/disruptions.js';
import { compareEvents } from './support/events.js';
import { repeatedBilled } from './support/repeats.js';

const T0 = new Date('2026-01-01T00:00:00Z');
const request = (from: string) => ({
  provider: 'quake-catalog',
  start_time: from,
  end_time: '2025-06-01T00:00:00Z',
  max_results: 200,
});

function call(executionId: string | null, from: string, over: Partial<EmulatorCall> = {}): EmulatorCall {
  return {
    at: T0,
    operation: 'earthquake',
    path: '/v1/earthquakes',
    body: request(from),
    hadInvocationId: false,
    authorized: true,
    httpStatus: executionId === null ? 500 : 200,
    outcome: executionId === null ? null : 'succeeded',
    billed: executionId !== null,
    units: executionId === null ? 0 : 3,
    returned: 3,
    matched: 3,
    truncated: false,
    order: null,
    executionId,
    fault: null,
    ...over,
  };
}

let nextId = 1;
function row(executionId: string | null, from: string, over: Partial<AuditRow> = {}): AuditRow {
  return {
    id: nextId++,
    operation: 'earthquake',
    streamKey: 'earthquake:all',
    partitionKey: 'w',
    jobId: 'j',
    attempt: 1,
    callPurpose: 'scan',
    // Keys in another order than the wire: the match must not depend on it.
    request: { max_results: 200, end_time: '2025-06-01T00:00:00Z', start_time: from, provider: 'quake-catalog' },
    httpStatus: executionId === null ? 500 : 200,
    code: 0,
    message: 'ok',
    outcome: executionId === null ? null : 'succeeded',
    billed: executionId !== null,
    units: executionId === null ? null : 3,
    executionId,
    invocationId: null,
    errorKind: executionId === null ? 'server' : null,
    errorDetail: null,
    truncated: false,
    rowsWritten: 0,
    startedAt: new Date(T0.getTime() + nextId),
    finishedAt: new Date(T0.getTime() + nextId + 1),
    durationMs: 1,
    backfillId: null,
    ...over,
  };
}

const event = (id: string, magnitude: number): EarthquakeEvent => ({
  id,
  time: '2025-05-02T03:04:05.678Z',
  magnitude,
  magnitude_type: 'ml',
  place: 'Somewhere',
  latitude: 1,
  longitude: 2,
  depth_km: 3,
  tsunami_flag: false,
  url: null,
});

describe('fault suite checks', () => {
  it('pairs by execution id, then failures without one by request and status', () => {
    const calls = [call('exec_1', 'a'), call(null, 'b'), call('exec_2', 'b')];
    const r = reconcile(calls, [row('exec_2', 'b'), row(null, 'b'), row('exec_1', 'a')]);
    expect(r.pairs.map((p) => [p.call.executionId, p.by])).toEqual([
      ['exec_1', 'execution'],
      ['exec_2', 'execution'],
      [null, 'request'],
    ]);
    expect([r.unaudited, r.unmatchedRows, r.duplicated, r.phantom]).toEqual([[], [], [], []]);
  });

  it('finds an attempt without a row, an id audited twice, an invented id and a request that never arrived', () => {
    const calls = [call('exec_1', 'a'), call('exec_2', 'b'), call('exec_3', 'c')];
    const timeout = row(null, 'z', { errorKind: 'timeout', httpStatus: null });
    const r = reconcile(calls, [row('exec_1', 'a'), row('exec_1', 'a'), row('exec_9', 'b'), timeout]);
    expect(r.unaudited.map((c) => c.executionId)).toEqual(['exec_2', 'exec_3']);
    expect(r.duplicated.map((d) => [d.executionId, d.rows.length])).toEqual([['exec_1', 2]]);
    expect(r.phantom.map((p) => p.executionId)).toEqual(['exec_9']);
    expect(r.unmatchedRows).toEqual([timeout]);
  });

  it('an answer the client never read pairs with its unfinished row by request', () => {
    const r = reconcile(
      [call('exec_1', 'a')],
      [row(null, 'a', { finishedAt: null, billed: null, httpStatus: null, errorKind: null })],
    );
    expect(r.pairs.map((p) => p.by)).toEqual(['request']);
  });

  it('counts a paid request paid again, and tells a lost answer from a recorded one', () => {
    const calls = [
      call('exec_1', 'a'),
      call('exec_2', 'a'),
      call('exec_3', 'b'),
      call('exec_4', 'b'),
      call('exec_5', 'c', { fault: 'schema_break' }),
      call('exec_6', 'c'),
    ];
    const repeats = repeatedBilled(calls, new Set(), new Set(['exec_1', 'exec_2', 'exec_4', 'exec_6']));
    expect(repeats.map((r) => [r.call.executionId, r.times, r.lostBefore])).toEqual([
      ['exec_2', 2, false],
      ['exec_4', 2, true],
    ]);
  });

  it('does not count a request asked again after its answer was swallowed', () => {
    expect(
      repeatedBilled([call('exec_1', 'a'), call('exec_2', 'a')], new Set(['exec_1']), new Set(['exec_2'])),
    ).toEqual([]);
  });

  it('a call is caught by a disruption between its request and its commit only', () => {
    const kill = { kind: 'kill' as const, from: 10_000, to: 10_000 };
    expect([caughtBy(9_000, null, kill), caughtBy(9_000, 9_500, kill), caughtBy(9_000, 10_200, kill)]).toEqual([
      true,
      true,
      true,
    ]);
    expect([caughtBy(8_000, 8_500, kill), caughtBy(10_001, 10_050, kill)]).toEqual([false, false]);
  });

  it('finds lost, unexpected and differing events', () => {
    const catalog = [event('a', 1), event('b', 2), event('c', 3)];
    const found = compareEvents([event('a', 1), event('c', 3.5), event('d', 4)], catalog);
    expect([found.lost, found.unexpected, found.differing]).toEqual([1, 1, 1]);
    expect(found.problems.join('\n')).toMatch(/c: magnitude 3\.5 != 3/);
    expect(compareEvents([event('a', 1), event('b', 2), event('c', 3)], catalog).problems).toEqual([]);
  });
});
