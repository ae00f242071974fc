import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { earthquakeEventSchema } from '../../../src/gateway/schemas.js';
import { bundledDataDir } from '../src/bundled-data.js';
import {
  eventPageUrl,
  loadUsgsCsv,
  loadUsgsFile,
  loadUsgsFiles,
  loadUsgsGeoJson,
  mergeEvents,
} from '../src/usgs-catalog.js';

const usgs = (name: string) => join(bundledDataDir(), 'usgs', name);
const MAY = usgs('all_month_2025-05-06_2025-06-05.csv');
const AUG = usgs('all_month_2025-08-19_2025-09-18.csv');
const WEEK = usgs('all_week_2023-03-31_2023-04-07.geojson');

const may = loadUsgsCsv(readFileSync(MAY, 'utf8'));
const aug = loadUsgsCsv(readFileSync(AUG, 'utf8'));
const week = loadUsgsGeoJson(readFileSync(WEEK, 'utf8'));

describe('USGS CSV loader on the real feeds', () => {
  it('loads every row once', () => {
    expect(may).toHaveLength(9366);
    expect(aug).toHaveLength(10045);
    expect(new Set(may.map((e) => e.id)).size).toBe(9366);
    expect(new Set(aug.map((e) => e.id)).size).toBe(10045);
  });

  it('maps every field of the first row exactly', () => {
    expect(may[0]).toEqual({
      id: 'nn00898537',
      time: '2025-06-05T09:16:03.063Z',
      magnitude: 0,
      magnitude_type: 'ml',
      place: '45 km ESE of Beatty, Nevada',
      latitude: 36.731,
      longitude: -116.3014,
      depth_km: 10.8,
      tsunami_flag: false,
      url: 'https://earthquake.usgs.gov/earthquakes/eventpage/nn00898537',
    });
  });

  it('keeps the event without a magnitude, with null magnitude and type', () => {
    const missing = aug.filter((e) => e.magnitude === null);
    expect(missing).toEqual([
      {
        id: 'nc75229802',
        time: '2025-08-28T11:15:07.910Z',
        magnitude: null,
        magnitude_type: null,
        place: '3 km N of Redwood Valley, CA',
        latitude: 39.29033279419,
        longitude: -123.20816802978,
        depth_km: 20.979999542236,
        tsunami_flag: false,
        url: 'https://earthquake.usgs.gov/earthquakes/eventpage/nc75229802',
      },
    ]);
  });

  it('keeps negative magnitudes, including ones below the -1 request floor', () => {
    const negMay = may.filter((e) => e.magnitude !== null && e.magnitude < 0);
    expect(negMay).toHaveLength(782);
    expect(Math.min(...negMay.map((e) => e.magnitude as number))).toBe(-2.03);
    expect(aug.filter((e) => e.magnitude !== null && e.magnitude < 0)).toHaveLength(676);
  });

  it('produces events that satisfy the spec schema, times in toISOString form', () => {
    for (const e of [...may, ...aug]) {
      expect(earthquakeEventSchema.safeParse(e).success).toBe(true);
      expect(new Date(e.time).toISOString()).toBe(e.time);
      expect(e.tsunami_flag).toBe(false);
      expect(e.url).toBe(eventPageUrl(e.id));
    }
  });

  it('maps empty cells to null and normalises time', () => {
    const csv = [
      'time,latitude,longitude,depth,mag,magType,nst,id,place,type',
      '2025-01-02T03:04:05Z,1.5,-2.5,,,,,xx1,,earthquake',
      '2025-01-02T03:04:06.5Z,1,2,3,-0.4,md,,xx2,"a, b",quarry blast',
    ].join('\n');
    expect(loadUsgsCsv(csv)).toEqual([
      {
        id: 'xx1',
        time: '2025-01-02T03:04:05.000Z',
        magnitude: null,
        magnitude_type: null,
        place: null,
        latitude: 1.5,
        longitude: -2.5,
        depth_km: null,
        tsunami_flag: false,
        url: 'https://earthquake.usgs.gov/earthquakes/eventpage/xx1',
      },
      {
        id: 'xx2',
        time: '2025-01-02T03:04:06.500Z',
        magnitude: -0.4,
        magnitude_type: 'md',
        place: 'a, b',
        latitude: 1,
        longitude: 2,
        depth_km: 3,
        tsunami_flag: false,
        url: 'https://earthquake.usgs.gov/earthquakes/eventpage/xx2',
      },
    ]);
  });

  it('rejects a file without a needed column or with a bad number', () => {
    expect(() => loadUsgsCsv('time,latitude,longitude\n2025-01-01T00:00:00Z,1,2')).toThrow(/missing column "depth"/);
    const bad = 'time,latitude,longitude,depth,mag,magType,id,place\n2025-01-01T00:00:00Z,north,2,1,1,ml,a,p';
    expect(() => loadUsgsCsv(bad)).toThrow(/latitude/);
  });
});

describe('USGS GeoJSON loader on the real feed', () => {
  it('loads every feature once', () => {
    expect(week).toHaveLength(2389);
    expect(new Set(week.map((e) => e.id)).size).toBe(2389);
  });

  it('maps epoch ms, [lon, lat, depth], tsunami and url exactly', () => {
    expect(week[0]).toEqual({
      id: 'ak0234gpdcgp',
      time: '2023-04-07T17:20:12.380Z',
      magnitude: 0.7,
      magnitude_type: 'ml',
      place: '17 km N of Four Mile Road, Alaska',
      latitude: 64.7564,
      longitude: -149.0596,
      depth_km: 17.7,
      tsunami_flag: false,
      url: 'https://earthquake.usgs.gov/earthquakes/eventpage/ak0234gpdcgp',
    });
  });

  it('agrees with the raw document for every feature', () => {
    const raw = JSON.parse(readFileSync(WEEK, 'utf8')) as {
      features: { id: string; properties: Record<string, unknown>; geometry: { coordinates: number[] } }[];
    };
    expect(week.filter((e) => e.tsunami_flag)).toHaveLength(6);
    raw.features.forEach((f, i) => {
      const e = week[i]!;
      expect(e.id).toBe(f.id);
      expect(e.time).toBe(new Date(f.properties['time'] as number).toISOString());
      expect([e.longitude, e.latitude, e.depth_km]).toEqual(f.geometry.coordinates);
      expect(e.tsunami_flag).toBe(f.properties['tsunami'] === 1);
      expect(e.url).toBe(f.properties['url']);
      expect(e.magnitude).toBe(f.properties['mag']);
      expect(e.magnitude_type).toBe(f.properties['magType']);
      expect(e.place).toBe(f.properties['place']);
      expect(earthquakeEventSchema.safeParse(e).success).toBe(true);
    });
    expect(week.filter((e) => (e.magnitude ?? 0) < 0)).toHaveLength(167);
  });

  it('maps tsunami 1 to true and missing values to null', () => {
    const doc = {
      type: 'FeatureCollection',
      features: [
        {
          type: 'Feature',
          id: 'us1',
          properties: { time: 0, mag: null, magType: null, place: null, tsunami: 1, url: null },
          geometry: { type: 'Point', coordinates: [10, 20, null] },
        },
      ],
    };
    expect(loadUsgsGeoJson(JSON.stringify(doc))).toEqual([
      {
        id: 'us1',
        time: '1970-01-01T00:00:00.000Z',
        magnitude: null,
        magnitude_type: null,
        place: null,
        latitude: 20,
        longitude: 10,
        depth_km: null,
        tsunami_flag: true,
        url: null,
      },
    ]);
  });
});

describe('loadUsgsFile and merging', () => {
  it('detects the format by content', async () => {
    expect(await loadUsgsFile(MAY)).toEqual(may);
    expect(await loadUsgsFile(WEEK)).toEqual(week);
  });

  it('names the file when it cannot be read', async () => {
    await expect(loadUsgsFile('/nonexistent/file.csv')).rejects.toThrow(/nonexistent\/file\.csv/);
  });

  it('merges files and collapses duplicate ids, first file wins', async () => {
    const all = await loadUsgsFiles([MAY, AUG, WEEK, MAY]);
    expect(all).toHaveLength(9366 + 10045 + 2389);
    const a = { ...may[0]!, place: 'first' };
    const b = { ...may[0]!, place: 'second' };
    expect(mergeEvents([[a], [b]])).toEqual([a]);
  });
});
