import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EarthquakeEvent } from '../../../src/gateway/schemas.js';
import { CatalogIndex, materialize, tileEventId, tileSpanMs } from '../src/catalog-index.js';
import { bundledDataDir } from '../src/bundled-data.js';
import { EARTH_RADIUS_KM, haversineKm } from '../src/spec.js';
import { loadUsgsCsv } from '../src/usgs-catalog.js';

const aug = loadUsgsCsv(readFileSync(join(bundledDataDir(), 'usgs', 'all_month_2025-08-19_2025-09-18.csv'), 'utf8'));
const augIndex = new CatalogIndex(aug);
const ms = (iso: string) => Date.parse(iso);

function ev(id: string, time: string, extra: Partial<EarthquakeEvent> = {}): EarthquakeEvent {
  return {
    id,
    time,
    magnitude: 1,
    magnitude_type: 'ml',
    place: null,
    latitude: 0,
    longitude: 0,
    depth_km: 1,
    tsunami_flag: false,
    url: null,
    ...extra,
  };
}

describe('time window', () => {
  const events = [
    ev('c', '2025-01-03T00:00:00.000Z'),
    ev('a', '2025-01-01T00:00:00.000Z'),
    ev('b', '2025-01-02T00:00:00.000Z'),
    ev('b2', '2025-01-02T00:00:00.000Z'),
  ];
  const index = new CatalogIndex(events);

  it('returns events oldest first, ties by id', () => {
    const all = index.query({ startMs: 0, endMs: ms('2030-01-01T00:00:00Z') });
    expect(all.map((e) => e.id)).toEqual(['a', 'b', 'b2', 'c']);
  });

  it('includes both ends of the window', () => {
    const q = { startMs: ms('2025-01-01T00:00:00Z'), endMs: ms('2025-01-02T00:00:00Z') };
    expect(index.query(q).map((e) => e.id)).toEqual(['a', 'b', 'b2']);
    expect(index.query({ startMs: q.startMs + 1, endMs: q.endMs - 1 })).toEqual([]);
    expect(index.query({ startMs: q.endMs, endMs: q.endMs }).map((e) => e.id)).toEqual(['b', 'b2']);
  });

  it('matches a brute-force filter on the real catalog', () => {
    const start = ms('2025-08-28T11:15:07.910Z');
    const end = ms('2025-09-02T00:00:00Z');
    const expected = aug.filter((e) => ms(e.time) >= start && ms(e.time) <= end);
    const got = augIndex.query({ startMs: start, endMs: end });
    expect(got.map((e) => e.id).sort()).toEqual(expected.map((e) => e.id).sort());
    expect(got[0]!.id).toBe('nc75229802');
    expect(augIndex.count({ startMs: 0, endMs: Date.now() })).toBe(10045);
  });
});

describe('min_magnitude', () => {
  it('drops events below it and events without a magnitude', () => {
    const q = { startMs: 0, endMs: Date.now(), minMagnitude: -1 };
    const got = augIndex.query(q);
    const expected = aug.filter((e) => e.magnitude !== null && e.magnitude >= -1);
    expect(got).toHaveLength(expected.length);
    expect(got.some((e) => e.id === 'nc75229802')).toBe(false);
    expect(augIndex.count({ ...q, minMagnitude: 4.5 })).toBe(aug.filter((e) => (e.magnitude ?? -9) >= 4.5).length);
  });

  it('is inclusive', () => {
    const index = new CatalogIndex([ev('x', '2025-01-01T00:00:00Z', { magnitude: 2.5 })]);
    expect(index.count({ startMs: 0, endMs: Date.now(), minMagnitude: 2.5 })).toBe(1);
    expect(index.count({ startMs: 0, endMs: Date.now(), minMagnitude: 2.51 })).toBe(0);
  });
});

describe('circle', () => {
  it('uses haversine on a 6371.0088 km sphere', () => {
    expect(haversineKm(0, 0, 0, 1)).toBeCloseTo((EARTH_RADIUS_KM * Math.PI) / 180, 9);
    expect(haversineKm(90, 0, -90, 0)).toBeCloseTo(EARTH_RADIUS_KM * Math.PI, 6);
    expect(haversineKm(10, 170, 10, -170)).toBeCloseTo(haversineKm(10, -10, 10, 10), 9);
  });

  it('includes an event exactly on the rim and excludes one just outside', () => {
    const e = ev('rim', '2025-01-01T00:00:00Z', { latitude: 35, longitude: -118 });
    const d = haversineKm(34, -117, 35, -118);
    const index = new CatalogIndex([e]);
    const q = (radiusKm: number) => ({
      startMs: 0,
      endMs: Date.now(),
      circle: { latitude: 34, longitude: -117, radiusKm },
    });
    expect(index.count(q(d))).toBe(1);
    expect(index.count(q(d - 1e-6))).toBe(0);
  });

  it('matches brute force on the real catalog', () => {
    const circle = { latitude: 38.8, longitude: -122.8, radiusKm: 150 };
    const got = augIndex.query({ startMs: 0, endMs: Date.now(), circle, minMagnitude: 1 });
    const expected = aug.filter(
      (e) => (e.magnitude ?? -9) >= 1 && haversineKm(38.8, -122.8, e.latitude, e.longitude) <= 150,
    );
    expect(got.length).toBeGreaterThan(100);
    expect(got.map((e) => e.id).sort()).toEqual(expected.map((e) => e.id).sort());
  });
});

describe('tiling', () => {
  const base = [
    ev('a', '2025-01-01T00:00:00.000Z'),
    ev('b', '2025-01-01T00:00:10.250Z'),
    ev('c', '2025-01-01T00:00:20.500Z'),
  ];
  const minMs = ms(base[0]!.time);

  it('makes a tile the base span plus one second, in whole seconds', () => {
    expect(tileSpanMs(minMs, minMs + 20_500)).toBe(22_000);
    expect(tileSpanMs(minMs, minMs + 20_000)).toBe(21_000);
    expect(tileEventId('a', 0)).toBe('a');
    expect(tileEventId('a', 3)).toBe('a~t3');
  });

  it('covers [from, to] with shifted copies: counts = tiles x base, ids unique', () => {
    const span = 22_000;
    const index = new CatalogIndex(base, { from: new Date(minMs - 2 * span), to: new Date(minMs + 5 * span - 1) });
    const all = index.query({ startMs: -1e15, endMs: 1e15 });
    expect(all).toHaveLength(7 * 3);
    expect(index.count({ startMs: -1e15, endMs: 1e15 })).toBe(21);
    expect(new Set(all.map((e) => e.id)).size).toBe(21);
    expect(all.slice(0, 3).map((e) => [e.id, e.time])).toEqual([
      ['a~t-2', '2024-12-31T23:59:16.000Z'],
      ['b~t-2', '2024-12-31T23:59:26.250Z'],
      ['c~t-2', '2024-12-31T23:59:36.500Z'],
    ]);
    expect(all.filter((e) => !e.id.includes('~'))).toEqual(base);
    const times = all.map((e) => ms(e.time));
    expect(times).toEqual([...times].sort((x, y) => x - y));
  });

  it('cuts partial tiles at from and to', () => {
    const index = new CatalogIndex(base, { from: new Date(minMs + 5_000), to: new Date(minMs + 22_000 + 10_250) });
    expect(index.query({ startMs: -1e15, endMs: 1e15 }).map((e) => e.id)).toEqual(['b', 'c', 'a~t1', 'b~t1']);
  });

  it('answers a window inside a far tile without materialising tiles', () => {
    const from = new Date('1000-01-01T00:00:00Z');
    const to = new Date('9000-01-01T00:00:00Z');
    const index = new CatalogIndex(aug, { from, to });
    const span = index.tile!.spanMs;
    const baseMin = Math.min(...aug.map((e) => ms(e.time)));
    const k = Math.floor((ms('5000-06-01T00:00:00Z') - baseMin) / span);
    const window = { startMs: baseMin + k * span, endMs: baseMin + k * span + 7 * 86_400_000 };
    const got = index.query(window);
    const expected = augIndex.query({ startMs: baseMin, endMs: baseMin + 7 * 86_400_000 });
    expect(got.map((e) => e.id)).toEqual(expected.map((e) => tileEventId(e.id, k)));
    expect(got.map((e) => ms(e.time))).toEqual(expected.map((e) => ms(e.time) + k * span));
    expect(got[0]!.magnitude).toBe(expected[0]!.magnitude);
    const refs = index.matchRefs(window);
    expect(refs.every((r) => r.tile === k)).toBe(true);
    expect(refs.map(materialize)).toEqual(got);
    expect(index.baseSize).toBe(10045);
  });

  it('ten years of tiles hold tiles x base events', () => {
    const baseMin = Math.min(...aug.map((e) => ms(e.time)));
    const span = tileSpanMs(baseMin, Math.max(...aug.map((e) => ms(e.time))));
    const tiles = 122; // just over ten years of 30-day tiles
    const index = new CatalogIndex(aug, { from: new Date(baseMin), to: new Date(baseMin + tiles * span - 1) });
    expect(index.count({ startMs: -1e15, endMs: 1e15 })).toBe(tiles * 10045);
  });

  it('filters shifted copies like the base', () => {
    const index = new CatalogIndex(aug, {
      from: new Date('2025-01-01T00:00:00Z'),
      to: new Date('2026-01-01T00:00:00Z'),
    });
    const all = index.query({ startMs: -1e15, endMs: 1e15, minMagnitude: 5 });
    const perTile = aug.filter((e) => (e.magnitude ?? -9) >= 5).length;
    expect(all.length).toBeGreaterThanOrEqual(perTile * 11);
    expect(all.every((e) => (e.magnitude as number) >= 5)).toBe(true);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
  });
});
