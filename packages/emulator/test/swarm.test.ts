import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator } from '../src/server.js';
import { SWARM_PLACE, swarmEvents, validateSwarms, type SwarmSpec } from '../src/swarm.js';
import type { EmulatorOptions, RunningEmulator } from '../src/types.js';
import { haversineKm } from '../src/spec.js';
import { OPERATIONS } from '../src/spec.js';
import {
  earthquakeEventSchema,
  earthquakeResultSchema,
  envelopeSchema,
  type EarthquakeEvent,
} from '../../../src/gateway/schemas.js';

const KEY = 'swarm-key';
const AT = new Date('2025-06-01T12:00:00Z');
const SECOND = { start_time: '2025-06-01T12:00:00Z', end_time: '2025-06-01T12:00:01Z' };
const world: SwarmSpec = { at: AT, count: 250, spread: 'world' };
const place: SwarmSpec = { at: AT, count: 250, spread: 'place' };
/** The six octahedron vertices; 6,300 km circles around them cover the sphere (max gap ~6,083 km). */
const VERTICES = [
  [90, 0],
  [-90, 0],
  [0, 0],
  [0, 90],
  [0, 180],
  [0, -90],
] as const;
const RADIUS_KM = 6300;

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function start(extra: Partial<EmulatorOptions>): Promise<RunningEmulator> {
  const emu = await startEmulator({
    key: KEY,
    events: [],
    indicators: [],
    seed: 3,
    now: () => new Date('2025-07-01T00:00:00Z'),
    ...extra,
  });
  running.push(emu);
  return emu;
}

async function query(emu: RunningEmulator, body: Record<string, unknown>): Promise<EarthquakeEvent[]> {
  const r = await request(`${emu.url}${OPERATIONS.earthquake.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ provider: 'quake-catalog', ...SECOND, max_results: 200, ...body }),
  });
  return envelopeSchema(earthquakeResultSchema).parse(await r.body.json()).data.result.events ?? [];
}

describe('swarm events', () => {
  it('puts count valid events at distinct milliseconds inside the one second, ids swarm-<second>-<k>', () => {
    const events = swarmEvents(world, 1);
    expect(events).toHaveLength(250);
    const times = events.map((e) => Date.parse(e.time));
    expect(new Set(times).size).toBe(250);
    expect(times.every((t) => t >= AT.getTime() && t < AT.getTime() + 1000)).toBe(true);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(events.map((e) => e.id)).toEqual(Array.from({ length: 250 }, (_, k) => `swarm-2025-06-01T12:00:00Z-${k}`));
    for (const e of events) {
      expect(earthquakeEventSchema.safeParse(e).success).toBe(true);
      expect(e.magnitude).toBeGreaterThanOrEqual(1);
      expect(e.magnitude).toBeLessThanOrEqual(3);
      expect(Math.abs(e.latitude)).toBeLessThanOrEqual(90);
      expect(Math.abs(e.longitude)).toBeLessThanOrEqual(180);
    }
  });

  it('is deterministic from the seed', () => {
    expect(swarmEvents(world, 1)).toEqual(swarmEvents(world, 1));
    expect(swarmEvents(world, 1)).not.toEqual(swarmEvents(world, 2));
    expect(swarmEvents(place, 1)).toEqual(swarmEvents(place, 1));
  });

  it("'world' spreads them so that covering circles separate them", () => {
    const events = swarmEvents(world, 1);
    const inCircle = VERTICES.map(
      ([lat, lon]) => events.filter((e) => haversineKm(lat, lon, e.latitude, e.longitude) <= RADIUS_KM).length,
    );
    expect(Math.max(...inCircle)).toBeLessThan(events.length);
    // Roughly uniform: each cap holds about 22 % of the sphere.
    expect(Math.max(...inCircle)).toBeLessThan(events.length * 0.35);
    const covered = events.filter((e) =>
      VERTICES.some(([lat, lon]) => haversineKm(lat, lon, e.latitude, e.longitude) <= RADIUS_KM),
    );
    expect(covered).toHaveLength(events.length);
  });

  it("'place' keeps them within 1 km of 35N 139E", () => {
    const events = swarmEvents(place, 4);
    const d = events.map((e) => haversineKm(SWARM_PLACE.latitude, SWARM_PLACE.longitude, e.latitude, e.longitude));
    expect(Math.max(...d)).toBeLessThan(1);
    expect(new Set(events.map((e) => `${e.latitude},${e.longitude}`)).size).toBeGreaterThan(200);
  });

  it('rejects bad swarms with a RangeError', () => {
    const bad: SwarmSpec[][] = [
      [{ at: new Date('2025-06-01T12:00:00.500Z'), count: 5, spread: 'world' }],
      [{ at: new Date('nope'), count: 5, spread: 'world' }],
      [{ at: AT, count: 0, spread: 'world' }],
      [{ at: AT, count: 1001, spread: 'world' }],
      [{ at: AT, count: 2.5, spread: 'world' }],
      [{ at: AT, count: 5, spread: 'moon' as 'world' }],
      [world, place],
    ];
    for (const swarms of bad) expect(() => validateSwarms(swarms)).toThrow(RangeError);
  });
});

describe('swarms in the emulator', () => {
  it('serves a 250-event swarm in its second, truncated at 200', async () => {
    const emu = await start({ swarms: [world] });
    const answer = await query(emu, {});
    expect(answer).toHaveLength(200);
    expect(answer.every((e) => e.id.startsWith('swarm-2025-06-01T12:00:00Z-'))).toBe(true);
    expect(emu.calls[0]).toMatchObject({ matched: 250, returned: 200, truncated: true });
    expect(await query(emu, { start_time: '2025-06-01T12:00:01Z', end_time: '2025-06-01T12:00:02Z' })).toEqual([]);
  });

  it('serves circle queries and min_magnitude filters over the swarm', async () => {
    const emu = await start({ swarms: [world], events: [] });
    const truth = swarmEvents(world, 3);
    const seen = new Set<string>();
    for (const [latitude, longitude] of VERTICES) {
      const answer = await query(emu, { latitude, longitude, radius_km: RADIUS_KM });
      const expected = truth.filter((e) => haversineKm(latitude, longitude, e.latitude, e.longitude) <= RADIUS_KM);
      expect(answer.length).toBeLessThan(200);
      expect(answer.map((e) => e.id).sort()).toEqual(expected.map((e) => e.id).sort());
      for (const e of answer) seen.add(e.id);
    }
    expect(seen.size).toBe(250);
    const strong = await query(emu, { min_magnitude: 2.5 });
    expect(strong.map((e) => e.id).sort()).toEqual(
      truth
        .filter((e) => e.magnitude! >= 2.5)
        .map((e) => e.id)
        .sort(),
    );
  });

  it("a 'place' swarm is served only by circles around its place", async () => {
    const emu = await start({ swarms: [{ ...place, count: 150 }] });
    expect(await query(emu, { latitude: 35, longitude: 139, radius_km: 1 })).toHaveLength(150);
    expect(await query(emu, { latitude: 0, longitude: 0, radius_km: 5000 })).toEqual([]);
  });

  it('merges with file events and can be replaced at run time', async () => {
    const file: EarthquakeEvent = { ...swarmEvents(place, 1)[0]!, id: 'us7000abcd', time: '2025-06-01T12:00:00.999Z' };
    const emu = await start({ events: [file], swarms: [{ ...place, count: 3 }] });
    expect((await query(emu, {})).map((e) => e.id).sort()).toEqual([
      'swarm-2025-06-01T12:00:00Z-0',
      'swarm-2025-06-01T12:00:00Z-1',
      'swarm-2025-06-01T12:00:00Z-2',
      'us7000abcd',
    ]);
    emu.setSwarms([]);
    expect((await query(emu, {})).map((e) => e.id)).toEqual(['us7000abcd']);
    emu.setSwarms([{ at: new Date('2025-06-01T12:00:00Z'), count: 7, spread: 'world' }]);
    expect(await query(emu, {})).toHaveLength(8);
    expect(() => emu.setSwarms([{ at: AT, count: -1, spread: 'world' }])).toThrow(RangeError);
  });

  it('reports the whole swarm at one time with whole-second precision', async () => {
    const emu = await start({ swarms: [world], timePrecision: 'second' });
    const answer = await query(emu, {});
    expect(new Set(answer.map((e) => e.time))).toEqual(new Set(['2025-06-01T12:00:00.000Z']));
  });
});
