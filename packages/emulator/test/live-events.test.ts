import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledDataDir } from '../src/bundled-data.js';
import { CatalogIndex } from '../src/catalog-index.js';
import { addedEvent, LIVE_PLACE_ANCHOR, MAX_TIME_SHIFT_MS, revisedEvent } from '../src/live-events.js';
import { LiveCredit, resolveLiveSpec } from '../src/live-timer.js';
import { createRng, sampleInRandomOrder } from '../src/rng.js';
import { loadUsgsCsv } from '../src/usgs-catalog.js';
import { earthquakeEventSchema, type EarthquakeEvent } from '../../../src/gateway/schemas.js';

const aug = loadUsgsCsv(readFileSync(join(bundledDataDir(), 'usgs', 'all_month_2025-08-19_2025-09-18.csv'), 'utf8'));
const T = Date.parse('2025-06-01T12:00:00Z');
const WIDE = { fromMs: T - 86_400_000, toMs: T + 86_400_000 };

function ev(id: string, timeMs: number, magnitude: number | null, place: string | null): EarthquakeEvent {
  return {
    id,
    time: new Date(timeMs).toISOString(),
    magnitude,
    magnitude_type: 'md',
    place,
    latitude: 36.1,
    longitude: -117.6,
    depth_km: 7.2,
    tsunami_flag: false,
    url: `https://earthquake.usgs.gov/earthquakes/eventpage/${id}`,
  };
}

describe('revisedEvent', () => {
  const cases = [
    ev('ci1', T, 2.5, '12 km NNE of Ridgecrest, CA'),
    ev('ci2', T, 10, 'south of the Fiji Islands'),
    ev('ci3', T, -1, 'Fiji Islands region'),
    ev('ci4', T, null, null),
  ];

  it('keeps the id, url, position and depth; changes magnitude (within -1..10) and place; moves time by at most 5 s', () => {
    const rng = createRng(9);
    for (const before of cases) {
      for (let i = 0; i < 300; i++) {
        const after = revisedEvent(before, rng, WIDE);
        expect(earthquakeEventSchema.safeParse(after).success).toBe(true);
        const { id, url, latitude, longitude, depth_km, magnitude_type, tsunami_flag } = before;
        expect(after).toMatchObject({ id, url, latitude, longitude, depth_km, magnitude_type, tsunami_flag });
        expect(after.magnitude).not.toBe(before.magnitude);
        expect(after.magnitude).toBeGreaterThanOrEqual(-1);
        expect(after.magnitude).toBeLessThanOrEqual(10);
        expect(Math.round(after.magnitude! * 100) / 100).toBe(after.magnitude);
        expect(after.place).not.toBe(before.place);
        const shift = Math.abs(Date.parse(after.time) - T);
        expect(shift).toBeGreaterThan(0);
        expect(shift).toBeLessThanOrEqual(MAX_TIME_SHIFT_MS);
      }
    }
  });

  it('re-words the place around the same named place, as USGS does', () => {
    const rng = createRng(2);
    expect(revisedEvent(cases[0]!, rng, WIDE).place).toMatch(/^\d+ km [NSEW]{1,3} of Ridgecrest, CA$/);
    expect(revisedEvent(cases[1]!, rng, WIDE).place).toMatch(/^\d+ km [NSEW]{1,3} of the Fiji Islands$/);
    expect(revisedEvent(cases[2]!, rng, WIDE).place).toMatch(/^\d+ km [NSEW]{1,3} of Fiji Islands region$/);
    expect(revisedEvent(cases[3]!, rng, WIDE).place).toMatch(
      new RegExp(`^\\d+ km [NSEW]{1,3} of ${LIVE_PLACE_ANCHOR}$`),
    );
  });

  it('keeps the time inside the window when the event sits at its edge', () => {
    const rng = createRng(4);
    const edge = { fromMs: T, toMs: T + 1000 };
    for (let i = 0; i < 200; i++) {
      for (const at of [T, T + 1000]) {
        const t = Date.parse(revisedEvent(ev('e', at, 1, null), rng, edge).time);
        expect(t).toBeGreaterThanOrEqual(edge.fromMs);
        expect(t).toBeLessThanOrEqual(edge.toMs);
      }
    }
  });
});

describe('addedEvent', () => {
  it('is a valid event at a whole millisecond inside the window', () => {
    const rng = createRng(5);
    const w = { fromMs: T, toMs: T + 3_600_000 };
    const times = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const e = addedEvent(`live-${i}`, rng, w);
      expect(earthquakeEventSchema.safeParse(e).success).toBe(true);
      expect(e).toMatchObject({ id: `live-${i}`, url: null, tsunami_flag: false, magnitude_type: 'ml' });
      const t = Date.parse(e.time);
      times.add(t);
      expect(t).toBeGreaterThanOrEqual(w.fromMs);
      expect(t).toBeLessThanOrEqual(w.toMs);
      expect(Math.abs(e.latitude)).toBeLessThanOrEqual(90);
      expect(Math.abs(e.longitude)).toBeLessThanOrEqual(180);
      expect(e.magnitude).toBeGreaterThanOrEqual(0);
      expect(e.magnitude).toBeLessThanOrEqual(5);
    }
    expect(times.size).toBeGreaterThan(490);
    const one = addedEvent('x', rng, { fromMs: T, toMs: T });
    expect(one.time).toBe(new Date(T).toISOString());
  });

  it('is deterministic from the stream', () => {
    expect(addedEvent('a', createRng(1), WIDE)).toEqual(addedEvent('a', createRng(1), WIDE));
    expect(addedEvent('a', createRng(1), WIDE)).not.toEqual(addedEvent('a', createRng(2), WIDE));
  });
});

describe('CatalogIndex.withChanges', () => {
  it('equals a fresh index of the changed catalog and leaves the old index as it was', () => {
    const index = new CatalogIndex(aug);
    const rng = createRng(3);
    const gone = sampleInRandomOrder(aug, 400, rng);
    const revised = gone
      .slice(0, 150)
      .map((e) => revisedEvent(e, rng, { fromMs: 0, toMs: Date.parse('2030-01-01T00:00:00Z') }));
    // New events on existing times, so that (time, id) ties must merge in id order.
    const added = aug.slice(0, 60).map((e, i) => ({ ...e, id: `${i % 2 === 0 ? '0' : 'zz'}live-${i}` }));
    const removeIds = new Set(gone.map((e) => e.id));
    const next = index.withChanges(removeIds, [...revised, ...added]);
    const expected = new CatalogIndex([...aug.filter((e) => !removeIds.has(e.id)), ...revised, ...added]);
    expect(next.baseEvents()).toEqual(expected.baseEvents());
    expect(next.baseSize).toBe(aug.length - 400 + 150 + 60);
    const q = {
      startMs: Date.parse('2025-08-25T00:00:00Z'),
      endMs: Date.parse('2025-08-26T00:00:00Z'),
      minMagnitude: 1,
    };
    expect(next.query(q)).toEqual(expected.query(q));
    expect(index.baseSize).toBe(aug.length);
    expect(index.baseEvents()).toEqual(new CatalogIndex(aug).baseEvents());
  });

  it('ignores ids it does not hold', () => {
    const index = new CatalogIndex(aug.slice(0, 10));
    expect(index.withChanges(new Set(['nope', 'nada']), []).baseEvents()).toEqual(index.baseEvents());
  });

  it('lists the untiled events inside a window', () => {
    const index = new CatalogIndex(aug);
    const from = Date.parse('2025-09-01T00:00:00Z');
    const to = Date.parse('2025-09-01T06:00:00Z');
    const inside = aug
      .filter((e) => Date.parse(e.time) >= from && Date.parse(e.time) <= to)
      .map((e) => e.id)
      .sort();
    expect(
      index
        .baseEventsBetween(from, to)
        .map((e) => e.id)
        .sort(),
    ).toEqual(inside);
  });
});

describe('live rates', () => {
  it('turns per-minute rates into whole changes per tick, carrying fractions', () => {
    const credit = new LiveCredit(resolveLiveSpec({ addPerMinute: 600, revisePerMinute: 300, deletePerMinute: 120 }));
    expect(credit.next()).toEqual({ add: 10, revise: 5, delete: 2 });
    const sum = (spec: Parameters<typeof resolveLiveSpec>[0], ticks: number) => {
      const c = new LiveCredit(resolveLiveSpec(spec));
      const total = { add: 0, revise: 0, delete: 0 };
      for (let i = 0; i < ticks; i++) {
        const n = c.next();
        total.add += n.add;
        total.revise += n.revise;
        total.delete += n.delete;
      }
      return total;
    };
    expect(sum({ addPerMinute: 7, revisePerMinute: 0.5, deletePerMinute: 13 }, 60)).toEqual({
      add: 7,
      revise: 0,
      delete: 13,
    });
    expect(sum({ addPerMinute: 7, revisePerMinute: 0.5, deletePerMinute: 13 }, 120)).toEqual({
      add: 14,
      revise: 1,
      delete: 26,
    });
    expect(sum({ addPerMinute: 1, tickMs: 250 }, 240)).toEqual({ add: 1, revise: 0, delete: 0 });
    expect(sum({ addPerMinute: 0.5, tickMs: 60_000 }, 4)).toEqual({ add: 2, revise: 0, delete: 0 });
  });

  it('fills defaults and rejects bad rates, ticks and windows with a RangeError', () => {
    expect(resolveLiveSpec({})).toEqual({
      perMinute: { add: 0, revise: 0, delete: 0 },
      tickMs: 1000,
      window: undefined,
    });
    const bad = [
      { addPerMinute: -1 },
      { revisePerMinute: Number.NaN },
      { deletePerMinute: 2_000_000 },
      { tickMs: 9 },
      { tickMs: 1.5 },
      { tickMs: 3_600_001 },
      { window: { from: new Date('2025-02-01T00:00:00Z'), to: new Date('2025-01-01T00:00:00Z') } },
      { window: { from: new Date('nope'), to: new Date('2025-01-01T00:00:00Z') } },
    ];
    for (const spec of bad) expect(() => resolveLiveSpec(spec)).toThrow(RangeError);
  });
});
