import { asc } from 'drizzle-orm';
import { earthquakeEvents } from '../../src/db/schema.js';
import { wireShape } from '../../src/db/earthquake-events.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import type { Db } from '../../src/db/connection.js';

/** Every field of every stored event, in the wire shape, sorted by id, for a field-by-field comparison. */
export async function storedEvents(handle: { db: Db } | Db): Promise<EarthquakeEvent[]> {
  const db = 'select' in handle ? handle : handle.db;
  const rows = await db.select().from(earthquakeEvents).orderBy(asc(earthquakeEvents.id));
  return rows.map(wireShape);
}

/** A catalog as the table should hold it: times in toISOString form (truncated to `unitMs` as the gateway reports them), sorted by id. */
export function asStored(events: readonly EarthquakeEvent[], unitMs = 1): EarthquakeEvent[] {
  return events
    .map((e) => {
      const ms = Date.parse(e.time);
      return { ...e, time: new Date(Math.floor(ms / unitMs) * unitMs).toISOString() };
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A hand-made event in the gateway's wire shape, for tests of selection and answers (place, url unset). */
export function wireEvent(id: string, timeMs: number, magnitude: number | null = 2): EarthquakeEvent {
  return {
    id,
    time: new Date(timeMs).toISOString(),
    magnitude,
    magnitude_type: 'ml',
    place: null,
    latitude: 10,
    longitude: 20,
    depth_km: 5,
    tsunami_flag: false,
    url: null,
  };
}
