import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '@gateway-ingest/emulator';
import { gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { NO_FILTERS } from '../../src/domain/filters.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { asStored, storedEvents } from '../support/events.js';
import { HANG_UP, SILENT, startGatewayProxy, type Rewritten } from '../support/gateway-proxy.js';
import { createTestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';
import { catalogOf, MAY_MONTH, TWO_DAYS } from '../support/proxied-backfill.js';

/**
 * The gateway away for more calls than a window may fail in a row (JOB_ATTEMPTS): its first answers
 * are 503s, connections closed before a byte of an answer, and 429s that say not when to come back. Such failures say nothing against the
 * window, and none is billed: it waits the gateway out for GATEWAY_OUTAGE_GRACE_MS since its last
 * answer, then fails as before. An answer that breaks the spec is no outage: it still fails the
 * window at its JOB_ATTEMPTS-th time in a row (it may have been billed), as does one cut midway or a
 * timeout (the answer that did not arrive may have been billed).
 */
const KEY = 'test-key-outage';
const ATTEMPTS = 3;
const AWAY_CALLS = 12;

const unavailable: Rewritten = { status: 503, body: 'Service Unavailable' };
const cut: Rewritten = { status: 200, body: '{"code":0,', cutAfterBytes: 0 };
/** A 429 that says not when: the gateway busy, no sooner known. */
const busy: Rewritten = { status: 429, body: '{"code":429,"message":"too many requests"}' };
const broken: Rewritten = { status: 200, body: '{"code":0,"data":{}}' };

/** The body of a liveness probe: a window ending where it starts, which every gateway must refuse. */
const isLivenessProbe = (request: string) => {
  const body = JSON.parse(request) as { start_time?: string; end_time?: string };
  return body.start_time === body.end_time;
};

async function readTwoDays(
  graceMs: number,
  away: (n: number, request: string) => Rewritten | null,
  gatewayTimeoutMs?: number,
  awayCalls = AWAY_CALLS,
  /** What every answer the gateway gives becomes (as it is, by default). */
  rewrite?: Parameters<typeof startGatewayProxy>[1],
) {
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: KEY, earthquakeFiles: [MAY_MONTH], indicatorFiles: [], seed: 3 });
  let asked = 0;
  const proxy = await startGatewayProxy(emulator.url, rewrite, (request) =>
    ++asked <= awayCalls ? away(asked, request) : null,
  );
  const pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY, {
    attempts: ATTEMPTS,
    gatewayOutageGraceMs: graceMs,
    ...(gatewayTimeoutMs !== undefined && { gatewayTimeoutMs }),
  });
  try {
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters: NO_FILTERS,
      ...TWO_DAYS,
      refresh: false,
    });
    const progress = await pipeline.run([summary]);
    const audit = await db.db.select().from(gatewayExecutions);
    const [partition] = await db.db
      .select()
      .from(ingestPartitions)
      .where(eq(ingestPartitions.streamKey, summary.streamKey));
    return { progress, audit, partition: partition!, events: await storedEvents(db), billed: emulator.calls };
  } finally {
    await pipeline.close();
    await proxy.close();
    await emulator.close();
    await db.drop();
  }
}

describe('a gateway away for more calls than a window may fail in a row', () => {
  it('is waited out within GATEWAY_OUTAGE_GRACE_MS: the window completes, nothing billed for the outage', async () => {
    const r = await readTwoDays(60_000, (n) => [unavailable, HANG_UP, busy][n % 3]!);
    expect(r.progress).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    expect(r.events).toEqual(asStored(await catalogOf()));
    const failures = r.audit.filter((a) => a.errorKind !== null);
    expect(failures.map((a) => a.errorKind).sort()).toEqual(
      ['rate_limited', 'server', 'transport'].flatMap((kind) => Array<string>(AWAY_CALLS / 3).fill(kind)),
    );
    expect(failures.some((a) => a.billed === true)).toBe(false);
    expect(r.audit.filter((a) => a.billed).length).toBe(r.billed.filter((c) => c.billed).length);
    expect([r.partition.consecutiveFailures, r.partition.failingSince]).toEqual([0, null]);
  });

  it.concurrent(
    'is waited out when it goes silent too: a liveness probe unanswered tells it from a slow query',
    async () => {
      // Eight requests in a row taken and never answered, liveness probes included, then answers again.
      const silentCalls = 8;
      const r = await readTwoDays(60_000, () => SILENT, 500, silentCalls);
      expect(r.progress).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
      expect(r.events).toEqual(asStored(await catalogOf()));
      const failures = r.audit.filter((a) => a.httpStatus === null);
      expect(failures.map((a) => a.errorKind)).toEqual(Array<string>(silentCalls).fill('timeout'));
      // The first query times out and a probe follows it; from then on a probe goes first, and the query
      // waits behind it until one is answered: the rest of the silence costs probes alone.
      expect(failures.map((a) => a.callPurpose)).toEqual(['walk', ...Array<string>(silentCalls - 1).fill('liveness')]);
      // An unanswered probe asked what every gateway refuses: not billed, where a query's timeout may be.
      expect(failures.map((a) => a.billed)).toEqual([null, ...Array<boolean>(silentCalls - 1).fill(false)]);
      // The probe that found the gateway back is audited too, answered and unbilled, before the query it let go.
      const answered = r.audit.filter((a) => a.httpStatus !== null);
      expect(answered[0]).toMatchObject({ callPurpose: 'liveness', errorKind: 'parameters', billed: false });
      expect(r.audit.filter((a) => a.billed).length).toBe(r.billed.filter((c) => c.billed).length);
    },
  );

  it.concurrent(
    'is slow, not silent, when every answer comes past GATEWAY_TIMEOUT_MS: its queries still go',
    async () => {
      // Every answer 1.2 s late against a timeout of 0.5 s: the first query times out, the probe after it
      // (waited for twice the setting) too, and the gateway is taken for silent; but each timeout doubles
      // the next deadline, so the probe before the next query is answered, and the queries go.
      const late = (body: string, status: number): Rewritten => ({ status, body, delayMs: 1_200 });
      const r = await readTwoDays(60_000, () => null, 500, 0, late);
      expect(r.progress).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
      expect(r.events).toEqual(asStored(await catalogOf()));
      expect(r.audit.slice(0, 3).map((a) => [a.callPurpose, a.errorKind])).toEqual([
        ['walk', 'timeout'],
        ['liveness', 'timeout'],
        ['liveness', 'parameters'],
      ]);
      expect(r.audit.slice(3).every((a) => a.callPurpose !== 'liveness' && a.errorKind === null)).toBe(true);
    },
  );

  it.concurrent('fails a window whose queries time out while the gateway answers its liveness probe', async () => {
    // A second for the probe's refusal: a loaded machine must not pass it off as no answer.
    const r = await readTwoDays(60_000, (_, request) => (isLivenessProbe(request) ? null : SILENT), 1_000);
    expect(r.progress).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });
    expect(r.partition.lastError).toMatch(new RegExp(`^${ATTEMPTS} failed attempts in a row without an answer`));
    expect(r.partition.lastError).toMatch(/answered a liveness probe \(HTTP 400 .*raise GATEWAY_TIMEOUT_MS/);
    // Each timeout followed by a probe, each answered: the gateway is there, so no query waits behind a probe.
    expect(r.audit.map((a) => [a.callPurpose, a.errorKind])).toEqual(
      Array.from({ length: ATTEMPTS }, () => [
        ['walk', 'timeout'],
        ['liveness', 'parameters'],
      ]).flat(),
    );
    expect(r.audit.filter((a) => a.callPurpose === 'liveness').map((a) => a.billed)).toEqual(
      Array<boolean>(ATTEMPTS).fill(false),
    );
  });

  it('asks again after refusals that name nothing wrong with the request: they may be failures elsewhere', async () => {
    // Fewer than JOB_ATTEMPTS in a row: a refusal that said what was wrong would have failed the window at once.
    const vague: Rewritten = { status: 400, body: '{"code":400,"message":"request failed"}' };
    const r = await readTwoDays(0, () => vague, undefined, ATTEMPTS - 1);
    expect(r.progress).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    expect(r.events).toEqual(asStored(await catalogOf()));
    const refused = r.audit.filter((a) => a.errorKind !== null);
    expect(refused.map((a) => [a.errorKind, a.billed])).toEqual(Array(ATTEMPTS - 1).fill(['parameters', false]));
  });

  it('fails the window at its JOB_ATTEMPTS-th failure in a row where no grace is given', async () => {
    const r = await readTwoDays(0, () => unavailable);
    expect(r.progress).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });
    expect(r.partition.lastError).toMatch(new RegExp(`^${ATTEMPTS} failed attempts in a row without an answer`));
    expect(r.partition.failingSince).not.toBeNull();
  });

  it('is no excuse for answers that break the spec: they fail the window at its JOB_ATTEMPTS-th in a row', async () => {
    const r = await readTwoDays(60_000, () => broken);
    expect(r.progress).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });
    expect(r.audit.map((a) => a.errorKind)).toEqual(Array<string>(ATTEMPTS).fill('invalid_response'));
  });

  it('is no excuse for answers cut after their headers either: the gateway may have billed them', async () => {
    const r = await readTwoDays(60_000, () => cut);
    expect(r.progress).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });
    expect(r.audit.map((a) => [a.errorKind, a.httpStatus])).toEqual(Array(ATTEMPTS).fill(['transport', 200]));
  });
});
