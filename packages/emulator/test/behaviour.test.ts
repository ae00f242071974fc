import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { matchWindow, resolveBehaviour, reportedTime } from '../src/behaviour.js';
import { startEmulator } from '../src/server.js';
import type { EmulatorOptions, RunningEmulator } from '../src/types.js';
import { OPERATIONS } from '../src/spec.js';
import { earthquakeResultSchema, envelopeSchema, type EarthquakeEvent } from '../../../src/gateway/schemas.js';
import { wireEvent } from '../../../test/support/events.js';

const KEY = 'behaviour-key';
const NOW = new Date('2025-07-01T00:00:00Z');
const T0 = Date.parse('2025-06-01T12:00:00Z');

/** 120 events a minute apart from T0, magnitudes cycling 0.0 .. 5.9 (a few null). */
const minutes = Array.from({ length: 120 }, (_, i) =>
  wireEvent(`m${i}`, T0 + i * 60_000, i % 17 === 3 ? null : ((i * 7) % 60) / 10),
);

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function start(events: EarthquakeEvent[], extra: Partial<EmulatorOptions> = {}): Promise<RunningEmulator> {
  const emu = await startEmulator({ key: KEY, events, indicators: [], seed: 5, now: () => NOW, ...extra });
  running.push(emu);
  return emu;
}

async function query(emu: RunningEmulator, body: Record<string, unknown>): Promise<EarthquakeEvent[]> {
  const r = await request(`${emu.url}${OPERATIONS.earthquake.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({
      provider: 'quake-catalog',
      start_time: '2025-06-01T00:00:00Z',
      end_time: '2025-06-02T00:00:00Z',
      ...body,
    }),
  });
  const env = envelopeSchema(earthquakeResultSchema).parse(await r.body.json());
  expect(env.data.execution.outcome).toBe('succeeded');
  return env.data.result.events ?? [];
}

const ids = (events: EarthquakeEvent[]): string[] => events.map((e) => e.id);

describe("order 'magnitude'", () => {
  it('keeps the largest magnitudes, largest first, ties newest first, null smallest', async () => {
    const events = [
      wireEvent('a', T0, 4),
      wireEvent('b', T0 + 1, null),
      wireEvent('c', T0 + 2, 5),
      wireEvent('d', T0 + 3, 4),
      wireEvent('e', T0 + 4, 1),
      wireEvent('f', T0 + 5, null),
    ];
    const emu = await start(events, { order: 'magnitude' });
    expect(ids(await query(emu, { max_results: 3 }))).toEqual(['c', 'd', 'a']);
    expect(ids(await query(emu, { max_results: 6 }))).toEqual(['c', 'd', 'a', 'e', 'f', 'b']);
    expect(emu.calls.map((c) => [c.order, c.truncated])).toEqual([
      ['magnitude', true],
      ['magnitude', false],
    ]);
  });

  it('on a real-sized catalog, no dropped event is larger than a kept one', async () => {
    const emu = await start(minutes);
    emu.setOrder('magnitude');
    const kept = await query(emu, { max_results: 20 });
    const keptIds = new Set(ids(kept));
    const smallestKept = Math.min(...kept.map((e) => e.magnitude ?? -Infinity));
    const dropped = minutes.filter((e) => !keptIds.has(e.id));
    expect(dropped.every((e) => (e.magnitude ?? -Infinity) <= smallestKept)).toBe(true);
    expect(kept.map((e) => e.magnitude)).toEqual(
      [...kept.map((e) => e.magnitude)].sort((x, y) => (y ?? -1) - (x ?? -1)),
    );
  });
});

describe("orders 'depth', 'id', 'id-desc' and 'newest-swap'", () => {
  // Time order a..f; ids not in time order; depths not in either.
  const spec: Array<[string, number | null]> = [
    ['us3', 10],
    ['ak7', null],
    ['Z9', 600],
    ['nc1', 10],
    ['ak10', 33],
    ['hv2', 0],
  ];
  const events = spec.map(([id, depth], i) => ({ ...wireEvent(id, T0 + i), depth_km: depth }));

  it('reads depth_km and the reported id from each event', async () => {
    const emu = await start(events, { order: 'depth' });
    expect(ids(await query(emu, { max_results: 3 }))).toEqual(['Z9', 'ak10', 'nc1']);
    expect(ids(await query(emu, { max_results: 6 }))).toEqual(['Z9', 'ak10', 'nc1', 'us3', 'hv2', 'ak7']);
    emu.setOrder('id');
    expect(ids(await query(emu, { max_results: 3 }))).toEqual(['Z9', 'ak10', 'ak7']);
    emu.setOrder('id-desc');
    expect(ids(await query(emu, { max_results: 3 }))).toEqual(['us3', 'nc1', 'hv2']);
    emu.setOrder('newest-swap');
    expect(ids(await query(emu, { max_results: 4 }))).toEqual(['hv2', 'ak10', 'Z9', 'ak7']);
    expect(ids(await query(emu, { max_results: 6 }))).toEqual(['hv2', 'ak10', 'nc1', 'Z9', 'ak7', 'us3']);
    expect(emu.calls.map((c) => [c.order, c.truncated])).toEqual([
      ['depth', true],
      ['depth', false],
      ['id', true],
      ['id-desc', true],
      ['newest-swap', true],
      ['newest-swap', false],
    ]);
  });

  it('ranks tiled copies by the id the answer reports', async () => {
    const base = [wireEvent('b', T0), wireEvent('a', T0 + 1)];
    // Tiles are 2 s apart: three copies of each event from T0 to T0 + 6 s.
    const emu = await start(base, { order: 'id', tile: { from: new Date(T0), to: new Date(T0 + 5_999) } });
    expect(ids(await query(emu, { max_results: 4 }))).toEqual(['a', 'a~t1', 'a~t2', 'b']);
  });
});

describe("order 'mixed'", () => {
  it('behaves as newest with ratio 0 and as random with ratio 1', async () => {
    const emu = await start(minutes, { order: 'mixed', mixedRandomRatio: 0 });
    const newest = ids(minutes).reverse().slice(0, 10);
    for (let i = 0; i < 5; i++) expect(ids(await query(emu, { max_results: 10 }))).toEqual(newest);
    emu.setMixedRandomRatio(1);
    const randomAnswers = [];
    for (let i = 0; i < 5; i++) randomAnswers.push(ids(await query(emu, { max_results: 10 })));
    expect(randomAnswers.some((a) => a.join() !== newest.join())).toBe(true);
    expect(emu.calls.map((c) => c.order)).toEqual([
      ...Array<string>(5).fill('newest'),
      ...Array<string>(5).fill('random'),
    ]);
  });

  it('with ratio 0.5 uses both orders across calls, reproducibly from the seed', async () => {
    const run = async (): Promise<string[]> => {
      const emu = await start(minutes, { order: 'mixed', mixedRandomRatio: 0.5, seed: 9 });
      for (let i = 0; i < 30; i++) await query(emu, { max_results: 10 });
      return emu.calls.map((c) => String(c.order));
    };
    const first = await run();
    expect(new Set(first)).toEqual(new Set(['newest', 'random']));
    expect(await run()).toEqual(first);
  });

  it('defaults mixedRandomRatio to 0.2', () => {
    expect(resolveBehaviour({ order: 'mixed' }).mixedRandomRatio).toBe(0.2);
  });
});

describe('time precision', () => {
  it("'second' reports whole-second times but filters on the exact time", async () => {
    const events = [wireEvent('early', T0 + 50), wireEvent('late', T0 + 750)];
    const emu = await start(events, { timePrecision: 'second' });
    const answer = await query(emu, { start_time: '2025-06-01T12:00:00.100Z', end_time: '2025-06-01T12:00:01Z' });
    expect(answer.map((e) => [e.id, e.time])).toEqual([['late', '2025-06-01T12:00:00.000Z']]);
    emu.setTimePrecision('ms');
    expect((await query(emu, {}))[0]!.time).toBe('2025-06-01T12:00:00.750Z');
  });

  it("'minute' reports times truncated to the minute, before a query's start where that falls inside it", async () => {
    const events = [wireEvent('inside', T0 + 45_000)];
    const emu = await start(events, { timePrecision: 'minute' });
    const answer = await query(emu, { start_time: '2025-06-01T12:00:30Z', end_time: '2025-06-01T12:01:00Z' });
    expect(answer.map((e) => [e.id, e.time])).toEqual([['inside', '2025-06-01T12:00:00.000Z']]);
  });

  it('truncates the ISO way before 1970 too', () => {
    expect(reportedTime(-500, 'second')).toBe('1969-12-31T23:59:59.000Z');
    expect(reportedTime(-500, 'minute')).toBe('1969-12-31T23:59:00.000Z');
    expect(reportedTime(1500, 'ms')).toBe('1970-01-01T00:00:01.500Z');
  });
});

describe('window boundaries', () => {
  const events = [wireEvent('atStart', T0), wireEvent('inside', T0 + 30_000), wireEvent('atEnd', T0 + 60_000)];
  const window = { start_time: '2025-06-01T12:00:00Z', end_time: '2025-06-01T12:01:00Z' };

  it('inclusive by default: events exactly at start_time and end_time match', async () => {
    const emu = await start(events);
    expect(ids(await query(emu, { ...window, max_results: 5 }))).toEqual(['atEnd', 'inside', 'atStart']);
  });

  it('an exclusive start drops the event exactly at start_time, an exclusive end the one at end_time', async () => {
    const emu = await start(events, { startBoundary: 'exclusive' });
    expect(ids(await query(emu, window))).toEqual(['atEnd', 'inside']);
    emu.setStartBoundary('inclusive');
    emu.setEndBoundary('exclusive');
    expect(ids(await query(emu, window))).toEqual(['inside', 'atStart']);
    emu.setStartBoundary('exclusive');
    expect(ids(await query(emu, window))).toEqual(['inside']);
  });
});

describe('ignoreFractionalSeconds', () => {
  const events = [wireEvent('s200', T0 + 200), wireEvent('s800', T0 + 800), wireEvent('e200', T0 + 60_200)];
  const window = { start_time: '2025-06-01T12:00:00.500Z', end_time: '2025-06-01T12:01:00.500Z' };

  it('changes which events match a 12:00:00.500Z start (and a .500 end)', async () => {
    const emu = await start(events);
    expect(ids(await query(emu, window))).toEqual(['e200', 's800']);
    emu.setIgnoreFractionalSeconds(true);
    // Read as [12:00:00, 12:01:00]: s200 now matches, e200 (at 12:01:00.200) no longer does.
    expect(ids(await query(emu, window))).toEqual(['s800', 's200']);
  });

  it('truncates before the boundaries apply', () => {
    const b = resolveBehaviour({ ignoreFractionalSeconds: true, startBoundary: 'exclusive', endBoundary: 'exclusive' });
    expect(matchWindow(T0 + 500, T0 + 2500, b)).toEqual({ startMs: T0 + 1, endMs: T0 + 1999 });
  });
});

describe('silentCap', () => {
  it('returns min(cap, max_results) events, still succeeded, logged as truncated', async () => {
    const emu = await start(minutes, { silentCap: 30 });
    expect(await query(emu, {})).toHaveLength(30);
    expect(await query(emu, { max_results: 10 })).toHaveLength(10);
    expect(await query(emu, { max_results: 200 })).toHaveLength(30);
    emu.setSilentCap(150);
    expect(await query(emu, { max_results: 200 })).toHaveLength(120);
    emu.setSilentCap(null);
    expect(await query(emu, { max_results: 200 })).toHaveLength(120);
    expect(emu.calls.map((c) => [c.outcome, c.units, c.matched, c.truncated])).toEqual([
      ['succeeded', 30, 120, true],
      ['succeeded', 10, 120, true],
      ['succeeded', 30, 120, true],
      ['succeeded', 120, 120, false],
      ['succeeded', 120, 120, false],
    ]);
  });

  it('keeps the newest under the cap, like max_results does', async () => {
    const emu = await start(minutes, { silentCap: 5 });
    expect(ids(await query(emu, {}))).toEqual(ids(minutes).reverse().slice(0, 5));
  });
});

describe('validation of the knobs', () => {
  it('rejects bad option values with a RangeError before loading data', async () => {
    const bad: Partial<EmulatorOptions>[] = [
      { order: 'sideways' as 'newest' },
      { mixedRandomRatio: 1.5 },
      { mixedRandomRatio: Number.NaN },
      { timePrecision: 'fortnight' as 'ms' },
      { startBoundary: 'open' as 'inclusive' },
      { endBoundary: 'closed' as 'inclusive' },
      { ignoreFractionalSeconds: 'yes' as unknown as boolean },
      { silentCap: 0 },
      { silentCap: 201 },
      { silentCap: 2.5 },
    ];
    for (const extra of bad) await expect(start([], extra)).rejects.toBeInstanceOf(RangeError);
  });

  it('rejects bad values in the setters and keeps the old value', async () => {
    const emu = await start(minutes, { silentCap: 3 });
    expect(() => emu.setOrder('up' as 'newest')).toThrow(RangeError);
    expect(() => emu.setMixedRandomRatio(-0.1)).toThrow(/mixedRandomRatio/);
    expect(() => emu.setTimePrecision('ns' as 'ms')).toThrow(/timePrecision/);
    expect(() => emu.setStartBoundary('x' as 'inclusive')).toThrow(/startBoundary/);
    expect(() => emu.setEndBoundary('x' as 'inclusive')).toThrow(/endBoundary/);
    expect(() => emu.setIgnoreFractionalSeconds(1 as unknown as boolean)).toThrow(/ignoreFractionalSeconds/);
    expect(() => emu.setSilentCap(500)).toThrow(/silentCap/);
    expect(await query(emu, {})).toHaveLength(3);
  });
});
