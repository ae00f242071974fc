/**
 * The upsert's JSON parameter is built straight from an answer's events when it can be; it must
 * say exactly what the row mapping would (`eventRows`, then `wireShape`): duplicates collapsed to
 * the last, every time written as toISOString writes it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerJson, eventRows, wireShape } from '../../src/db/earthquake-events.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The same instant as RFC 3339 writes it in other ways than toISOString does. */
function spelled(ms: number, how: number): string {
  const iso = new Date(ms).toISOString();
  if (how === 0) return iso;
  if (how === 1) return iso.replace('T', 't').replace('Z', 'z');
  if (how === 2) return `${iso.slice(0, 19)}.${pad(new Date(ms).getUTCMilliseconds(), 3)}000Z`;
  const local = new Date(ms + 2 * 3_600_000).toISOString();
  return `${local.slice(0, 23)}+02:00`;
}

const event = fc.record({
  id: fc.constantFrom('us1', 'us2', 'ci3', 'nc4', 'ak5'),
  ms: fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2030, 0, 1) }),
  how: fc.integer({ min: 0, max: 3 }),
  magnitude: fc.option(fc.double({ min: -2, max: 10, noNaN: true })),
  place: fc.option(fc.string()),
  tsunami: fc.boolean(),
});

describe('answerJson', () => {
  it('says what eventRows and wireShape say, for any ids and spellings of time', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 12 }), (drawn) => {
        const events: EarthquakeEvent[] = drawn.map((d) => ({
          id: d.id,
          time: spelled(d.ms, d.how),
          magnitude: d.magnitude,
          magnitude_type: d.magnitude === null ? null : 'ml',
          place: d.place,
          latitude: 10.5,
          longitude: -20.25,
          depth_km: 3,
          tsunami_flag: d.tsunami,
          url: null,
        }));
        // As JSON both ways: the parameter is JSON text (-0 reads back as 0 from either).
        const expected = JSON.parse(
          JSON.stringify(eventRows(events, new Date(0), 1).map(wireShape)),
        ) as EarthquakeEvent[];
        const byId = (rows: EarthquakeEvent[]) => new Map(rows.map((r) => [r.id, r]));
        expect(byId(JSON.parse(answerJson(events)) as EarthquakeEvent[])).toEqual(byId(expected));
        expect((JSON.parse(answerJson(events)) as unknown[]).length).toBe(expected.length);
      }),
      { numRuns: 500 },
    );
  });
});
