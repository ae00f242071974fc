import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { bundledDataDir } from '../src/bundled-data.js';
import { LiveCatalog, type LiveChange } from '../src/live-catalog.js';
import { startEmulator } from '../src/server.js';
import { swarmEvents, type SwarmSpec } from '../src/swarm.js';
import type { EmulatorOptions, RunningEmulator } from '../src/types.js';
import { loadUsgsCsv } from '../src/usgs-catalog.js';
import { OPERATIONS } from '../src/spec.js';
import {
  earthquakeEventSchema,
  earthquakeResultSchema,
  envelopeSchema,
  type EarthquakeEvent,
} from '../../../src/gateway/schemas.js';
import { waitFor } from '../../../test/support/wait.js';

const KEY = 'live-key';
const NOW = new Date('2025-06-10T00:00:00Z');
const T0 = Date.parse('2025-06-01T00:00:00Z');
const HOUR = 3_600_000;
const aug = loadUsgsCsv(readFileSync(join(bundledDataDir(), 'usgs', 'all_month_2025-08-19_2025-09-18.csv'), 'utf8'));

function ev(id: string, timeMs: number): EarthquakeEvent {
  return {
    id,
    time: new Date(timeMs).toISOString(),
    magnitude: 2,
    magnitude_type: 'ml',
    place: '5 km N of Somewhere, CA',
    latitude: 10,
    longitude: 20,
    depth_km: 5,
    tsunami_flag: false,
    url: null,
  };
}

/** 120 events a minute apart from T0: two hours. */
const minutes = Array.from({ length: 120 }, (_, i) => ev(`m${i}`, T0 + i * 60_000));
const SECOND_HOUR = { from: new Date(T0 + HOUR), to: new Date(T0 + 2 * HOUR - 60_000) };

const running: RunningEmulator[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function start(extra: Partial<EmulatorOptions> = {}): Promise<RunningEmulator> {
  const emu = await startEmulator({ key: KEY, events: minutes, indicators: [], seed: 5, now: () => NOW, ...extra });
  running.push(emu);
  return emu;
}

async function query(emu: RunningEmulator, body: Record<string, unknown> = {}): Promise<EarthquakeEvent[]> {
  const r = await request(`${emu.url}${OPERATIONS.earthquake.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({
      provider: 'quake-catalog',
      start_time: '2025-05-31T00:00:00Z',
      end_time: '2025-06-02T00:00:00Z',
      max_results: 200,
      ...body,
    }),
  });
  return envelopeSchema(earthquakeResultSchema).parse(await r.body.json()).data.result.events ?? [];
}

const kinds = (changes: readonly LiveChange[]) => ({
  add: changes.filter((c) => c.kind === 'add').length,
  revise: changes.filter((c) => c.kind === 'revise').length,
  delete: changes.filter((c) => c.kind === 'delete').length,
});
const byId = (events: readonly EarthquakeEvent[]) => new Map(events.map((e) => [e.id, e]));
const inside = (e: EarthquakeEvent, w: { from: Date; to: Date }) =>
  Date.parse(e.time) >= w.from.getTime() && Date.parse(e.time) <= w.to.getTime();

describe('mutate', () => {
  it('adds, revises and deletes, logs every change and serves the catalog as it is now', async () => {
    const emu = await start();
    const made = emu.mutate({ add: 5, revise: 3, delete: 2 });
    expect(made.map((c) => c.kind)).toEqual([
      'revise',
      'revise',
      'revise',
      'delete',
      'delete',
      'add',
      'add',
      'add',
      'add',
      'add',
    ]);
    expect(emu.changes).toEqual(made);
    expect(made.every((c) => c.at.getTime() === NOW.getTime())).toBe(true);
    expect(made.filter((c) => c.kind === 'add').map((c) => c.id)).toEqual([
      'live-1',
      'live-2',
      'live-3',
      'live-4',
      'live-5',
    ]);
    const now = byId(emu.currentEvents());
    expect(now.size).toBe(120 + 5 - 2);
    for (const c of made) {
      if (c.kind === 'delete') expect([now.has(c.id), c.after, c.before?.id]).toEqual([false, undefined, c.id]);
      if (c.kind === 'revise') expect([now.get(c.id), c.before!.id, c.after!.id]).toEqual([c.after, c.id, c.id]);
      if (c.kind === 'add') expect([now.get(c.id), c.before]).toEqual([c.after, undefined]);
    }
    expect(new Set(made.filter((c) => c.kind !== 'add').map((c) => c.id)).size).toBe(5);
    const served = await query(emu);
    expect(served).toEqual(
      emu
        .currentEvents()
        .filter((e) => e.time < '2025-06-02')
        .reverse(),
    );
    expect(served.every((e) => earthquakeEventSchema.safeParse(e).success)).toBe(true);
  });

  it('keeps counting ids, revises and deletes earlier additions, and returns [] for nothing to do', async () => {
    const emu = await start({ events: [ev('live-1', T0)] });
    const w = { from: new Date(T0), to: new Date(T0 + HOUR) };
    expect(emu.mutate({ add: 4 }, w).map((c) => c.id)).toEqual(['live-2', 'live-3', 'live-4', 'live-5']);
    expect(emu.mutate({}, w)).toEqual([]);
    const second = emu.mutate({ revise: 3, delete: 2 }, w);
    expect(kinds(second)).toEqual({ add: 0, revise: 3, delete: 2 });
    expect(emu.currentEvents()).toHaveLength(3);
    for (const c of second.filter((x) => x.kind === 'revise')) expect(emu.currentEvents()).toContainEqual(c.after);
    expect(emu.changes).toHaveLength(9);
  });

  it('is deterministic from the seed', async () => {
    const run = async (seed: number) => {
      const emu = await start({ seed });
      emu.mutate({ add: 3, revise: 4, delete: 2 });
      emu.mutate({ add: 1, revise: 2, delete: 1 });
      return { changes: emu.changes.slice(), events: emu.currentEvents() };
    };
    const a = await run(5);
    expect(await run(5)).toEqual(a);
    expect((await run(6)).changes).not.toEqual(a.changes);
  });

  it('changes only events inside the window and adds inside it', async () => {
    const emu = await start();
    for (let i = 0; i < 5; i++) emu.mutate({ add: 3, revise: 4, delete: 2 }, SECOND_HOUR);
    for (const c of emu.changes) {
      if (c.before) expect(inside(c.before, SECOND_HOUR)).toBe(true);
      if (c.after) expect(inside(c.after, SECOND_HOUR)).toBe(true);
    }
    const firstHour = (events: EarthquakeEvent[]) =>
      events.filter((e) => Date.parse(e.time) < SECOND_HOUR.from.getTime());
    expect(firstHour(emu.currentEvents())).toEqual(firstHour(minutes));
    expect(emu.currentEvents()).toHaveLength(120 + 15 - 10);
  });

  it('makes fewer changes when fewer events are inside the window', async () => {
    const emu = await start();
    const three = { from: new Date(T0), to: new Date(T0 + 120_000) };
    expect(kinds(emu.mutate({ revise: 5, delete: 5 }, three))).toEqual({ add: 0, revise: 3, delete: 0 });
    const empty = await start({ events: [] });
    const w = { from: new Date(T0), to: new Date(T0 + HOUR) };
    expect(kinds(empty.mutate({ add: 2, revise: 5, delete: 5 }, w))).toEqual({ add: 2, revise: 0, delete: 0 });
  });

  it('defaults the window to the span of the file and swarm events', async () => {
    const emu = await start();
    for (let i = 0; i < 10; i++) emu.mutate({ add: 10 });
    const all = { from: new Date(T0), to: new Date(T0 + 119 * 60_000) };
    expect(emu.changes.every((c) => inside(c.after!, all))).toBe(true);
  });

  it('rejects bad counts and windows, and an empty catalog without a window', async () => {
    const emu = await start();
    for (const counts of [{ add: -1 }, { revise: 1.5 }, { delete: Number.NaN }])
      expect(() => emu.mutate(counts)).toThrow(RangeError);
    expect(() => emu.mutate({ add: 1 }, { from: new Date(T0 + 1), to: new Date(T0) })).toThrow(RangeError);
    const empty = await start({ events: [] });
    expect(() => empty.mutate({ add: 1 })).toThrow(/window/);
    expect(emu.changes).toEqual([]);
  });
});

describe('one consistent catalog per query', () => {
  it('leaves an index taken before a change as it was', () => {
    const published: unknown[] = [];
    const catalog = new LiveCatalog(
      minutes,
      [],
      1,
      undefined,
      () => NOW,
      (index) => published.push(index),
    );
    const before = catalog.index;
    const snapshot = before.baseEvents();
    const window = { startMs: T0, endMs: T0 + 2 * HOUR };
    const answer = before.query(window);
    catalog.mutate({ add: 20, revise: 20, delete: 20 });
    expect(before.baseEvents()).toEqual(snapshot);
    expect(before.query(window)).toEqual(answer);
    expect(catalog.index).not.toBe(before);
    expect(published).toEqual([catalog.index]);
    expect(catalog.index.baseEvents()).toEqual(catalog.currentEvents());
  });

  it('answers a request from the catalog as it is when the answer is made', async () => {
    let clockReads = 0;
    const emu = await start({ latencyMs: 150, now: () => (clockReads++, NOW) });
    const before = clockReads;
    const pending = query(emu);
    // A request reads the clock as it arrives, then waits out the latency before the answer is made.
    await waitFor(async () => clockReads > before, 5_000, 'the request to arrive', 5);
    emu.mutate({ delete: 100, add: 1 });
    const served = await pending;
    expect(served).toEqual(emu.currentEvents().reverse());
    expect(served).toHaveLength(21);
  });
});

describe('swarms and tiling', () => {
  const swarm: SwarmSpec = { at: new Date(T0 + HOUR), count: 20, spread: 'world' };

  it('revises and deletes swarm events, and setSwarms keeps the changes', async () => {
    const emu = await start({ events: [], swarms: [swarm] });
    const truth = swarmEvents(swarm, 5);
    const made = emu.mutate({ add: 2, revise: 5, delete: 5 });
    expect(made.filter((c) => c.kind !== 'add').every((c) => c.id.startsWith('swarm-'))).toBe(true);
    const after = emu.currentEvents();
    expect(after).toHaveLength(17);
    emu.setSwarms([swarm]);
    expect(emu.currentEvents()).toEqual(after);
    emu.setSwarms([]);
    expect(
      emu
        .currentEvents()
        .map((e) => e.id)
        .sort(),
    ).toEqual(['live-1', 'live-2']);
    for (const c of made.filter((x) => x.kind !== 'add')) expect(truth).toContainEqual(c.before);
    expect(await query(emu)).toHaveLength(2);
  });

  it('refuses live changes on a tiled catalog, and tiling still serves', async () => {
    const tile = { from: new Date('2025-01-01T00:00:00Z'), to: new Date('2025-06-05T00:00:00Z') };
    await expect(start({ tile, live: { addPerMinute: 60 } })).rejects.toThrow(/tile/);
    const emu = await start({ tile });
    expect(() => emu.mutate({ add: 1 })).toThrow(/tile/);
    expect(() => emu.startLive({ addPerMinute: 60 })).toThrow(/tile/);
    const served = await query(emu);
    expect(served).toHaveLength(200);
    expect(served.some((e) => e.id.includes('~t'))).toBe(true);
    expect(emu.currentEvents()).toEqual(minutes);
  });
});

describe('the live timer', () => {
  it('makes the configured changes per tick and stops on stopLive', async () => {
    const emu = await start({ events: aug, now: () => new Date('2025-09-20T00:00:00Z') });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    emu.startLive({ addPerMinute: 600, revisePerMinute: 300, deletePerMinute: 120 });
    vi.advanceTimersByTime(999);
    expect(emu.changes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(kinds(emu.changes)).toEqual({ add: 10, revise: 5, delete: 2 });
    vi.advanceTimersByTime(59_000);
    expect(kinds(emu.changes)).toEqual({ add: 600, revise: 300, delete: 120 });
    expect(emu.currentEvents()).toHaveLength(aug.length + 600 - 120);
    emu.stopLive();
    vi.advanceTimersByTime(10_000);
    expect(emu.changes).toHaveLength(1020);
  });

  it('restarts with a new spec and window; without one it uses the live option', async () => {
    const emu = await start();
    expect(() => emu.startLive()).toThrow(RangeError);
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    emu.startLive({ addPerMinute: 60, window: SECOND_HOUR });
    vi.advanceTimersByTime(30_000);
    emu.startLive({ deletePerMinute: 120, tickMs: 500 });
    vi.advanceTimersByTime(10_000);
    expect(kinds(emu.changes)).toEqual({ add: 30, revise: 0, delete: 20 });
    expect(emu.changes.filter((c) => c.kind === 'add').every((c) => inside(c.after!, SECOND_HOUR))).toBe(true);
    emu.stopLive();
    expect(() => emu.startLive({ addPerMinute: -1 })).toThrow(RangeError);
  });

  it('starts with the emulator under the live option and ends with close()', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const emu = await start({ live: { addPerMinute: 6000, revisePerMinute: 6000, tickMs: 10 } });
    vi.advanceTimersByTime(120);
    expect(kinds(emu.changes)).toEqual({ add: 12, revise: 12, delete: 0 });
    await emu.close();
    vi.advanceTimersByTime(1_000);
    expect(emu.changes).toHaveLength(24);
  });

  it('needs a window for an empty catalog, and fills it', async () => {
    await expect(start({ events: [], live: { addPerMinute: 1 } })).rejects.toThrow(/window/);
    const emu = await start({ events: [], live: { addPerMinute: 60_000, tickMs: 10, window: SECOND_HOUR } });
    await waitFor(async () => emu.currentEvents().length > 0, 5_000, 'the first live events', 10);
    expect(emu.currentEvents().every((e) => inside(e, SECOND_HOUR))).toBe(true);
  });
});
