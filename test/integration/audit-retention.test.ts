import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/connection.js';
import { retentionCutoff, rollUpBatch } from '../../src/db/retention.js';
import { silentLog } from '../../src/log.js';
import { startRetention } from '../../src/service/retention.js';
import { createTestDatabase, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { jobsDir, randomKey, startInProcess, waitFor } from '../support/service.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12, 0, 0);
const RETENTION_DAYS = 400;

interface AuditRow {
  daysAgo: number;
  operation?: 'earthquake' | 'indicator';
  stream?: string | null;
  billed?: boolean | null;
  units?: number | null;
  errorKind?: string | null;
  /** Several rows alike. */
  times?: number;
}

async function insertAudit(db: TestDatabase, rows: AuditRow[], nowMs = NOW): Promise<void> {
  for (const r of rows) {
    for (let i = 0; i < (r.times ?? 1); i++) {
      const startedAt = new Date(nowMs - r.daysAgo * DAY + i * 1000);
      await db.db.execute(sql`
        insert into gateway_executions (operation, stream_key, partition_key, request, billed, units, error_kind, started_at, finished_at, duration_ms)
        values (${r.operation ?? 'earthquake'}, ${r.stream === undefined ? 'earthquake:all' : r.stream}, 'p', '{}'::jsonb, ${r.billed === undefined ? true : r.billed},
          ${r.units === undefined ? 10 : r.units}, ${r.errorKind ?? null}, ${startedAt.toISOString()}, ${startedAt.toISOString()}, 40)`);
    }
  }
}

type DailyRow = {
  day: string;
  operation: string;
  stream_key: string | null;
  calls: number;
  billed_calls: number;
  billed_unknown: number;
  units: number;
  failures: number;
  failures_by_kind: Record<string, number>;
};

/** gateway_cost_daily without its `source` column, in a stable order. */
async function daily(db: TestDatabase): Promise<DailyRow[]> {
  const r = await db.db.execute<DailyRow>(sql`
    select day::text as day, operation, stream_key, calls, billed_calls, billed_unknown, units, failures, failures_by_kind
    from gateway_cost_daily order by day, operation, stream_key nulls first`);
  return r.rows;
}

async function auditCount(db: TestDatabase, before?: Date): Promise<number> {
  const r = await db.db.execute<{ n: number }>(
    before
      ? sql`select count(*)::int as n from gateway_executions where started_at < ${before.toISOString()}`
      : sql`select count(*)::int as n from gateway_executions`,
  );
  return r.rows[0]!.n;
}

/** Old and recent rows across days, operations, streams (one without), billed states and failure kinds. */
const MIXED: AuditRow[] = [
  { daysAgo: 700, times: 3 },
  { daysAgo: 700, stream: 'earthquake:m2.5', billed: false, units: null, errorKind: 'timeout', times: 2 },
  { daysAgo: 700, stream: 'earthquake:m2.5', billed: null, units: null, errorKind: 'unknown' },
  { daysAgo: 500, operation: 'indicator', stream: 'indicator:SP.POP.TOTL:US', units: 70, times: 12 },
  { daysAgo: 500, operation: 'indicator', stream: null, billed: false, units: null, errorKind: 'parameters' },
  { daysAgo: 401, billed: false, units: null, errorKind: 'server', times: 2 },
  { daysAgo: 401, billed: false, units: null, errorKind: 'rate_limited' },
  { daysAgo: 401, times: 4 },
  { daysAgo: 399, times: 2 },
  { daysAgo: 10, errorKind: 'timeout', billed: false, units: null },
  { daysAgo: 0, times: 3 },
];

describe('audit retention', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db.drop();
  });

  beforeEach(async () => {
    await db.db.execute(sql`truncate gateway_executions, gateway_cost_rollup`);
  });

  it('cuts off at a UTC midnight, so days are rolled up whole', () => {
    expect(retentionCutoff(NOW, 400).toISOString()).toBe(new Date(Date.UTC(2026, 5, 15) - 400 * DAY).toISOString());
    expect(retentionCutoff(Date.UTC(2026, 0, 1), 1).toISOString()).toBe('2025-12-31T00:00:00.000Z');
  });

  it('rolls up and deletes rows past retention in batches; daily totals per day and stream stay the same', async () => {
    await insertAudit(db, MIXED);
    const before = await daily(db);
    const cutoff = retentionCutoff(NOW, RETENTION_DAYS);
    const old = await auditCount(db, cutoff);
    expect(old).toBe(26);

    // Batches of 5 rows: several batches, and the 12-row indicator group taken whole in one.
    const batches: number[] = [];
    for (;;) {
      const b = await rollUpBatch(db.db, cutoff, 5);
      if (b.rows === 0) break;
      batches.push(b.rows);
    }
    expect(batches.length).toBeGreaterThan(3);
    expect(batches).toContain(12);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(old);

    expect(await auditCount(db, cutoff)).toBe(0);
    expect(await auditCount(db)).toBe(6);
    expect(await daily(db)).toEqual(before);
    const sources = await db.db.execute<{ source: string; n: number }>(
      sql`select source, count(*)::int as n from gateway_cost_daily group by 1 order by 1`,
    );
    expect(sources.rows).toEqual([
      { source: 'audit', n: 3 },
      { source: 'rollup', n: 5 },
    ]);
    // The stream-less row is rolled up under '' and shown as null, as the view shows audit rows.
    expect(before.find((r) => r.operation === 'indicator' && r.stream_key === null)).toMatchObject({
      calls: 1,
      failures_by_kind: { parameters: 1 },
    });
  });

  it('merges into existing roll-up rows, failures by kind added up', async () => {
    const cutoff = retentionCutoff(NOW, RETENTION_DAYS);
    await insertAudit(db, [
      { daysAgo: 401, times: 2 },
      { daysAgo: 401, billed: false, units: null, errorKind: 'server' },
    ]);
    await rollUpBatch(db.db, cutoff, 5_000);
    // A row of the same day and stream that appears later (a late completion, a replica's clock).
    await insertAudit(db, [
      { daysAgo: 401, billed: false, units: null, errorKind: 'server' },
      { daysAgo: 401, billed: false, units: null, errorKind: 'timeout' },
      { daysAgo: 401, billed: null, units: null },
    ]);
    await rollUpBatch(db.db, cutoff, 5_000);
    const r = await db.db.execute(
      sql`select calls, billed_calls, billed_unknown, units, failures_by_kind from gateway_cost_rollup`,
    );
    expect(r.rows).toEqual([
      { calls: 6, billed_calls: 2, billed_unknown: 1, units: 20, failures_by_kind: { server: 2, timeout: 1 } },
    ]);
    expect(await auditCount(db)).toBe(0);
  });

  it('two replicas at it at once count every row exactly once', async () => {
    await insertAudit(db, MIXED);
    const before = await daily(db);
    const other = openDb(db.url, { max: 2 });
    try {
      const a = startRetention({
        db: db.db,
        log: silentLog(),
        retentionDays: RETENTION_DAYS,
        batchRows: 3,
        now: () => NOW,
        intervalMs: 3_600_000,
      });
      const b = startRetention({
        db: other.db,
        log: silentLog(),
        retentionDays: RETENTION_DAYS,
        batchRows: 3,
        now: () => NOW,
        intervalMs: 3_600_000,
      });
      const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
      await Promise.all([a.stop(), b.stop()]);
      expect(ra.rows + rb.rows).toBe(26);
    } finally {
      await other.close();
    }
    expect(await auditCount(db)).toBe(6);
    expect(await daily(db)).toEqual(before);
  });

  it('the service rolls up at start with AUDIT_RETENTION_DAYS', async () => {
    const now = Date.now();
    await insertAudit(
      db,
      [
        { daysAgo: 40, times: 3 },
        { daysAgo: 40, billed: false, units: null, errorKind: 'timeout' },
        { daysAgo: 1, times: 2 },
      ],
      now,
    );
    const cutoff = retentionCutoff(now, 30);
    const oldDays = async () => (await daily(db)).filter((r) => r.day < cutoff.toISOString().slice(0, 10));
    const before = await oldDays();
    expect(before).toHaveLength(1);
    const jobs = jobsDir();
    // A stream is required; its schedule is far away and its gateway never called in this test.
    jobs.write(
      'indicators:\n  - name: idle\n    indicators: [SP.POP.TOTL]\n    countries: [US]\n    schedule: "0 0 1 1 *"\n',
    );
    const service = await startInProcess(
      {
        databaseUrl: db.url,
        prefix: uniquePrefix(),
        gatewayUrl: 'http://127.0.0.1:9',
        key: randomKey(),
        extra: { AUDIT_RETENTION_DAYS: '30' },
      },
      jobs.path,
    );
    try {
      await waitFor(async () => (await auditCount(db, cutoff)) === 0, 20_000, 'the retention sweep');
    } finally {
      await service.stop();
      jobs.remove();
    }
    expect(await oldDays()).toEqual(before);
    expect(await auditCount(db)).toBeGreaterThanOrEqual(2);
  });
});
