import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { asc } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { gatewayExecutions } from '../../src/db/schema.js';
import { asStored, storedEvents } from '../support/events.js';
import type { Rewritten } from '../support/gateway-proxy.js';
import { backfillThrough, catalogOf, type Rewrite } from '../support/proxied-backfill.js';

/**
 * Answers within the spec and HTTP that arrive in another shape than the emulator sends: bodies in
 * a content coding (RFC 9110 lets a server encode what the request did not rule out), a body
 * opening with a byte order mark, and bodies cut off midway after a 200 came. Each is read, or
 * audited as far as it arrived and asked again; the table ends equal to the catalog.
 */
const CODINGS: Array<[string, (b: Buffer) => Buffer]> = [
  ['gzip', gzipSync],
  ['deflate', deflateSync],
  ['br', brotliCompressSync],
  // Bare deflate under the name, as servers have long sent it.
  ['deflate', deflateRawSync],
];

describe('answers in a content coding, or opening with a byte order mark', () => {
  it('are decoded and stored, every call audited as the answer it was', async () => {
    const askedFor: string[] = [];
    let n = 0;
    const encode: Rewrite = (body, status, asked) => {
      askedFor.push(String(asked['accept-encoding']));
      const turn = n++ % (CODINGS.length + 1);
      const coding = CODINGS[turn];
      if (coding === undefined) return { status, body: `\uFEFF${body}` };
      return { status, body: coding[1](Buffer.from(body)), headers: { 'content-encoding': coding[0] } };
    };
    await backfillThrough(encode, async (db, emulator) => {
      expect(await storedEvents(db)).toEqual(asStored(await catalogOf()));
      const audit = await db.db.select().from(gatewayExecutions);
      expect(n).toBeGreaterThanOrEqual(CODINGS.length + 1);
      expect(audit).toHaveLength(emulator.calls.length);
      expect(audit.filter((a) => a.errorKind !== null)).toEqual([]);
      expect(new Set(askedFor)).toEqual(new Set(['gzip, deflate, br']));
    });
  });
});

describe('answers cut off midway after their status and headers', () => {
  it('are audited as far as they came, billed where they said so, and asked again', async () => {
    const cut = new Map<number, string>();
    let n = 0;
    // The second answer is cut halfway (its execution arrived), the fourth after 20 bytes (it did not).
    const cutSome: Rewrite = (body, status): Rewritten => {
      n++;
      const at = n === 2 ? Math.floor(body.length / 2) : n === 4 ? 20 : null;
      if (at === null) return body;
      cut.set(n, body.slice(0, at));
      return { status, body, cutAfterBytes: at };
    };
    await backfillThrough(
      cutSome,
      async (db, emulator) => {
        expect(await storedEvents(db)).toEqual(asStored(await catalogOf()));
        const audit = await db.db.select().from(gatewayExecutions).orderBy(asc(gatewayExecutions.id));
        expect(audit).toHaveLength(emulator.calls.length);
        const failed = audit.filter((a) => a.errorKind !== null);
        expect(failed.map((a) => [a.httpStatus, a.errorKind])).toEqual([
          [200, 'transport'],
          [200, 'transport'],
        ]);
        const [half, early] = [cut.get(2)!, cut.get(4)!];
        expect(half).toContain('"outcome":"succeeded"');
        expect(early).not.toContain('"outcome"');
        expect(failed.map((a) => a.billed)).toEqual([true, null]);
        for (const a of failed) expect(a.errorDetail).toMatch(/the answer stopped after \d+ characters/);
      },
      undefined,
      3,
    );
  });
});

describe('a failure of the data source answered 4xx, saying so only in its message', () => {
  it('is retried, unbilled, instead of ending the window as bad input', async () => {
    let refused = 0;
    const sourceDown = () =>
      refused++ < 2
        ? { status: 400, body: JSON.stringify({ code: 400, message: 'upstream catalog timed out' }) }
        : null;
    await backfillThrough(
      (body) => body,
      async (db, emulator) => {
        expect(await storedEvents(db)).toEqual(asStored(await catalogOf()));
        const audit = await db.db.select().from(gatewayExecutions);
        expect(audit.filter((a) => a.errorKind !== null).map((a) => [a.httpStatus, a.errorKind, a.billed])).toEqual([
          [400, 'data_source', false],
          [400, 'data_source', false],
        ]);
        expect(audit.filter((a) => a.billed === true)).toHaveLength(emulator.calls.filter((c) => c.billed).length);
      },
      undefined,
      3,
      sourceDown,
    );
  });
});
