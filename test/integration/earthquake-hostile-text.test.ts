import { createHash } from 'node:crypto';
import { isNotNull, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { storableKey } from '../../src/domain/text.js';
import { earthquakeEvents, earthquakeRevisions, gatewayExecutions } from '../../src/db/schema.js';
import { asStored, storedEvents } from '../support/events.js';
import type { Rewritten } from '../support/gateway-proxy.js';
import { backfillThrough, catalogOf, TWO_DAYS } from '../support/proxied-backfill.js';

/**
 * Answers within the spec whose text other systems read differently: JSON strings holding U+0000
 * and unpaired surrogates (PostgreSQL text and jsonb hold neither), event times in forms of RFC 3339
 * that V8's Date.parse misreads or refuses, and an empty match in a body the spec does not show.
 * Each is stored as the instant or text it says, instead of failing the window (and paying again)
 * or storing another time.
 */
const FROM = TWO_DAYS.fromMs;
const NUL = '\\u0000';

/** Every place gains a NUL and a lone high surrogate, every envelope a message with a lone low one. */
function hostile(body: string): string {
  return body
    .replaceAll('"place":"', `"place":"${NUL}\\ud800 `)
    .replace(/"message":"[^"]*"/, `"message":"note ${NUL}\\udc00"`);
}

/** Each event time rewritten as the same instant at +05:30, a twelve-digit fraction and a lower-case t. */
function otherTimeForms(body: string): string {
  return body.replace(/"time":"([^"]+)"/g, (_, time: string) => {
    const local = new Date(Date.parse(time) + 330 * 60_000).toISOString();
    return `"time":"${local.slice(0, 10)}t${local.slice(11, 23)}456789012+05:30"`;
  });
}

/** Ids ending in a digit below 5 reported to the minute (floored), the others to the millisecond: two sources. */
const minuteSource = (id: string) => /[0-4]$/.test(id);
function mixedPrecision(body: string): string {
  const answer = JSON.parse(body) as { data?: { result?: { events?: Array<{ id: string; time: string }> | null } } };
  for (const e of answer.data?.result?.events ?? []) {
    if (minuteSource(e.id)) e.time = new Date(Math.floor(Date.parse(e.time) / 60_000) * 60_000).toISOString();
  }
  return JSON.stringify(answer);
}

/** An empty match answered 404, its result left out: the spec shows no body for an empty match. */
function emptyAsNotFound(body: string): Rewritten {
  if (!body.includes('"events":[]')) return body;
  const { data, ...rest } = JSON.parse(body) as { data: { execution: unknown } };
  return { status: 404, body: JSON.stringify({ ...rest, message: 'no events', data: { execution: data.execution } }) };
}

/** 4,000 hex digits drawn from the id: as long as no index entry holds, and no compression shortens. */
function longId(id: string): string {
  let digits = '';
  for (let i = 0; digits.length < 4_000; i++) digits += createHash('sha256').update(`${id}/${i}`).digest('hex');
  return `${id}-${digits}`;
}
const withLongIds = (body: string) => body.replace(/"id":"([^"]+)"/g, (_, id: string) => `"id":"${longId(id)}"`);

const catalogDays = () => catalogOf();

describe('answers holding text PostgreSQL cannot store', () => {
  it('are stored whole, each such character replaced by U+FFFD, and audited', async () => {
    await backfillThrough(hostile, async (db, emulator) => {
      const catalog = await catalogDays();
      const table = await storedEvents(db);
      expect(table.map((e) => e.id).sort()).toEqual(catalog.map((e) => e.id).sort());
      const byId = new Map(catalog.map((e) => [e.id, e]));
      for (const e of table) {
        const original = byId.get(e.id)!.place;
        expect(e.place).toBe(original === null ? null : `\uFFFD\uFFFD ${original}`);
      }

      const audit = await db.db.select().from(gatewayExecutions);
      expect(audit.length).toBe(emulator.calls.length);
      for (const a of audit) expect(a.message).toBe('note \uFFFD\uFFFD');
    });
  });
});

describe('answers writing event times in other RFC 3339 forms', () => {
  it('store every event at the instant it was written, to the millisecond', async () => {
    await backfillThrough(otherTimeForms, async (db) => {
      expect(await storedEvents(db)).toEqual(asStored(await catalogDays()));
    });
  });
});

describe('answers reporting some events to the minute and others to the millisecond', () => {
  it('store every event at the time written, each allowed the precision of its own unit', async () => {
    const month = { fromMs: Date.parse('2025-05-06T00:00:00Z'), toMs: Date.parse('2025-06-05T00:00:00Z') };
    await backfillThrough(
      mixedPrecision,
      async (db) => {
        const catalog = await catalogOf(month);
        const floored = catalog.filter((e) => minuteSource(e.id));
        expect(floored.length).toBeGreaterThan(100);
        const expected = catalog.map((e) => (minuteSource(e.id) ? asStored([e], 60_000)[0]! : asStored([e])[0]!));
        expect(await storedEvents(db)).toEqual(expected.sort((a, b) => (a.id < b.id ? -1 : 1)));
      },
      month,
    );
  });
});

describe('answers writing an empty match in a form the spec does not show', () => {
  it('are read as empty where the execution says no event was returned: the window is proven, once', async () => {
    const week = { fromMs: FROM - 30 * 86_400_000, toMs: FROM - 23 * 86_400_000 };
    await backfillThrough(
      emptyAsNotFound,
      async (db, emulator) => {
        expect(await storedEvents(db)).toEqual([]);
        const audit = await db.db.select().from(gatewayExecutions);
        expect(audit.map((a) => [a.httpStatus, a.outcome, a.units, a.errorKind])).toEqual([
          [404, 'succeeded', 0, null],
        ]);
        expect(emulator.calls.filter((c) => c.billed)).toHaveLength(1);
      },
      week,
    );
  });
});

describe('answers whose event ids are longer than an index entry holds', () => {
  it('store each event under the digest of its id, the id whole beside it, and a refresh changes nothing', async () => {
    await backfillThrough(withLongIds, async (db, emulator, again) => {
      const catalog = (await catalogDays()).map((e) => ({ ...e, id: longId(e.id) }));
      const table = await db.db.select().from(earthquakeEvents);
      expect(table.map((e) => e.fullId).sort()).toEqual(catalog.map((e) => e.id).sort());
      for (const e of table) expect(e.id).toBe(storableKey(e.fullId!));
      const view = await db.db.execute<{ id: string; event_key: string }>(sql`select id, event_key from earthquakes`);
      expect(view.rows.map((r) => r.id).sort()).toEqual(catalog.map((e) => e.id).sort());

      const billed = emulator.calls.filter((c) => c.billed).length;
      expect(await again(true)).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
      expect(emulator.calls.filter((c) => c.billed).length).toBeGreaterThan(billed);
      expect(await db.db.select().from(earthquakeEvents).where(isNotNull(earthquakeEvents.deletedAt))).toEqual([]);
      expect(await db.db.select().from(earthquakeRevisions)).toEqual([]);
      expect(await db.db.$count(earthquakeEvents)).toBe(catalog.length);
    });
  });
});
