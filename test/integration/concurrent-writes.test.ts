import { describe, expect, it } from 'vitest';
import { eventRows, upsertEvents } from '../../src/db/earthquake-events.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { wireEvent } from '../support/events.js';
import { createTestDatabase } from '../support/isolation.js';

/**
 * Answers holding the same events are written at once whenever two reads cover the same time: two
 * streams (filtered and not) over one month, a refresh beside a backfill, a window's lanes, whose
 * chunks overlap by a second. The gateway's order differs between them, and a row is locked as its
 * upsert reaches it: unordered, two such writes deadlock and PostgreSQL aborts one, an answer paid for.
 */
const EVENTS: EarthquakeEvent[] = Array.from({ length: 400 }, (_, i) =>
  wireEvent(`us7000${String(i).padStart(4, '0')}`, Date.parse('2025-05-06T00:00:00Z') + i * 1_000),
);

describe('answers holding the same events, written at once in other orders', () => {
  it('never deadlock', async () => {
    const db = await createTestDatabase();
    const failures: unknown[] = [];
    try {
      for (let round = 0; round < 20; round++) {
        const revised = (events: EarthquakeEvent[], magnitude: number) =>
          eventRows(
            events.map((e) => ({ ...e, magnitude })),
            new Date(),
            0,
          );
        const reversed = [...EVENTS].reverse();
        const writes = [
          revised(EVENTS, round),
          revised(reversed, round + 0.5),
          revised(EVENTS.slice(100), round + 0.25),
          revised(reversed.slice(50), round + 0.75),
        ].map((rows) => upsertEvents(db.db, rows));
        for (const r of await Promise.allSettled(writes)) if (r.status === 'rejected') failures.push(r.reason);
      }
      const codes = failures.map((e) => (e as { cause?: { code?: string } }).cause?.code ?? String(e));
      expect(codes).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});
