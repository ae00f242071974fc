import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import type { EarthquakeEvent } from './spec.js';
import { EmulatorDataError } from './spec.js';
import { emptyToNull, numberOrNull } from './cells.js';

/** The CSV feed carries no URL, but every USGS event page lives at this address plus the id. */
export const USGS_EVENT_PAGE = 'https://earthquake.usgs.gov/earthquakes/eventpage/';

export function eventPageUrl(id: string): string {
  return `${USGS_EVENT_PAGE}${id}`;
}

function isoTime(value: string | number, what: string): string {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new EmulatorDataError(`${what}: invalid time ${JSON.stringify(value)}`);
  return d.toISOString();
}

const CSV_COLUMNS = ['time', 'latitude', 'longitude', 'depth', 'mag', 'magType', 'id', 'place'] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];

/** USGS CSV feed (`all_month.csv` layout); columns are found by name, not position. */
export function loadUsgsCsv(text: string): EarthquakeEvent[] {
  const rows = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true });
  const header = rows[0];
  if (!header) return [];
  const col = {} as Record<CsvColumn, number>;
  for (const name of CSV_COLUMNS) {
    const i = header.indexOf(name);
    if (i < 0) throw new EmulatorDataError(`USGS CSV: missing column "${name}"`);
    col[name] = i;
  }
  return rows.slice(1).map((row, n) => {
    const line = `USGS CSV row ${n + 2}`;
    const cell = (c: CsvColumn): string => row[col[c]] ?? '';
    const id = cell('id');
    const latitude = numberOrNull(cell('latitude'), `${line} latitude`);
    const longitude = numberOrNull(cell('longitude'), `${line} longitude`);
    if (id === '' || latitude === null || longitude === null) {
      throw new EmulatorDataError(`${line}: id, latitude and longitude are required`);
    }
    return {
      id,
      time: isoTime(cell('time'), line),
      magnitude: numberOrNull(cell('mag'), `${line} mag`),
      magnitude_type: emptyToNull(cell('magType')),
      place: emptyToNull(cell('place')),
      latitude,
      longitude,
      depth_km: numberOrNull(cell('depth'), `${line} depth`),
      // The CSV feed has no tsunami column; false is what the gateway reports for such events.
      tsunami_flag: false,
      url: eventPageUrl(id),
    };
  });
}

const geoJsonSchema = z.object({
  features: z.array(
    z.object({
      id: z.string().min(1),
      properties: z.object({
        time: z.number(),
        mag: z.number().nullish(),
        magType: z.string().nullish(),
        place: z.string().nullish(),
        tsunami: z.number().nullish(),
        url: z.string().nullish(),
      }),
      geometry: z.object({
        coordinates: z.tuple([z.number(), z.number()], z.number().nullable()),
      }),
    }),
  ),
});

/** USGS GeoJSON feed (`all_week.geojson` layout): time in epoch ms, coordinates [lon, lat, depth]. */
export function loadUsgsGeoJson(text: string): EarthquakeEvent[] {
  const parsed = geoJsonSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new EmulatorDataError(`USGS GeoJSON: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return parsed.data.features.map((f) => {
    const [longitude, latitude, depth] = f.geometry.coordinates;
    const p = f.properties;
    return {
      id: f.id,
      time: isoTime(p.time, `USGS GeoJSON feature ${f.id}`),
      magnitude: p.mag ?? null,
      magnitude_type: emptyToNull(p.magType),
      place: emptyToNull(p.place),
      latitude,
      longitude,
      depth_km: depth ?? null,
      tsunami_flag: (p.tsunami ?? 0) !== 0,
      url: p.url ?? null,
    };
  });
}

/** Format by content, not name: a GeoJSON document starts with `{`, a CSV feed with its header. */
export async function loadUsgsFile(path: string): Promise<EarthquakeEvent[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new EmulatorDataError(`${path}: ${(err as Error).message}`);
  }
  try {
    return text
      .replace(/^\uFEFF/, '')
      .trimStart()
      .startsWith('{')
      ? loadUsgsGeoJson(text)
      : loadUsgsCsv(text);
  } catch (err) {
    throw new EmulatorDataError(`${path}: ${(err as Error).message}`);
  }
}

/** Several files merged; an id seen in more than one keeps the copy from the first file listed. */
export function mergeEvents(lists: readonly (readonly EarthquakeEvent[])[]): EarthquakeEvent[] {
  const byId = new Map<string, EarthquakeEvent>();
  for (const list of lists) {
    for (const e of list) if (!byId.has(e.id)) byId.set(e.id, e);
  }
  return [...byId.values()];
}

export async function loadUsgsFiles(paths: readonly string[]): Promise<EarthquakeEvent[]> {
  return mergeEvents(await Promise.all(paths.map(loadUsgsFile)));
}
