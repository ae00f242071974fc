import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { UndiciGateway } from '../../src/gateway/client.js';
import { createTestDatabase, redisUrl, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { spawnCli } from '../support/run-cli.js';
import { Redis } from 'ioredis';
import { freePort, runRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

const KEY = 'cli-test-key-0123456789';

async function run(args: string[], env: Record<string, string>) {
  const cli = spawnCli(args, env);
  const started = Date.now();
  const { code } = await cli.exited;
  return { code, ms: Date.now() - started, out: cli.stdout(), err: cli.stderr() };
}

describe('the CLI, end to end', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ key: KEY, indicatorFiles: undefined, earthquakeFiles: [] });
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: `${redisUrl()}/2`,
      GATEWAY_BASE_URL: emulator.url,
      MARKET_KEY: KEY,
      QUEUE_PREFIX: uniquePrefix(),
      LOG_LEVEL: 'info',
      RETRY_BASE_DELAY_MS: '20',
    };
  });

  afterAll(async () => {
    await emulator.close();
    await db.drop();
  });

  it('backfill --inline does the whole job alone, then status reports it; the key appears nowhere', async () => {
    const r = await run(
      [
        'backfill',
        'indicators',
        '--indicator',
        'SP.POP.TOTL',
        '--country',
        'usa,WLD',
        '--from-year',
        '2000',
        '--to-year',
        '2016',
        '--inline',
      ],
      { ...env, GATEWAY_AUTH_HEADER: 'x-api-key' },
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/indicator:SP.POP.TOTL:USA: 1 partitions planned, 1 jobs enqueued/);
    expect(r.out).toMatch(/finished: 2 done, 0 failed/);
    expect(`${r.out}${r.err}`).not.toContain(KEY);
    const status = await run(['status', '--json'], env);
    expect(status.code).toBe(0);
    expect(status.out).toContain('"billedCalls": 1');
    const stored = await db.db.execute<{ n: number }>(
      sql`select count(*)::int as n from indicator_values where country_id in ('US', '1W')`,
    );
    expect(stored.rows[0]!.n).toBe(34);
    const leaked = await db.db.execute<{ n: number }>(
      sql`select count(*)::int as n from gateway_executions where request::text like ${`%${KEY}%`}`,
    );
    expect(leaked.rows[0]!.n).toBe(0);
  });

  it.each([
    [['backfill', 'earthquakes', '--from', '2025-13-01'], /--from: "2025-13-01"/],
    [['backfill', 'earthquakes', '--from', '2025-01-01', '--latitude', '10'], /together/],
    [['backfill', 'indicators', '--indicator', 'X', '--country', 'US'], /--indicator: "X"/],
    [['backfill', 'indicators', '--indicator', 'SP.POP.TOTL', '--country', 'US', '--from-year', '1959'], /--from-year/],
    [['backfill', 'earthquakes', '--from', '2025-01-01', '--bogus'], /unknown option/],
  ])('bad input %j exits 2 and enqueues nothing', async (args, message) => {
    const r = await run(args, env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it('fails within 5 s naming the URL when PostgreSQL or Redis is unreachable', async () => {
    const pg = await run(['status'], { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' });
    expect(pg.code).toBe(1);
    expect(pg.err).toMatch(/cannot reach PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/x.*Start it/);
    expect(pg.ms).toBeLessThan(8_000);
    const redis = await run(['backfill', 'earthquakes', '--from', '2025-01-01', '--to', '2025-01-02'], {
      ...env,
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(redis.code).toBe(1);
    expect(redis.err).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1.*Start it/);
  });

  it('a login or a password refused, and a privilege missing, are named as such', async () => {
    const url = new URL(db.url);
    url.username = `gi_limited_${Math.random().toString(36).slice(2, 10)}`;
    const login = await run(['status'], { ...env, DATABASE_URL: url.toString() });
    expect(login.code).toBe(1);
    expect(login.err).toMatch(/PostgreSQL at .* refused the login \(role "gi_limited_\w+" does not exist\)/);

    await db.db.execute(sql.raw(`create role ${url.username} login`));
    try {
      const denied = await run(['status'], { ...env, DATABASE_URL: url.toString() });
      expect(denied.code).toBe(1);
      expect(denied.err).toMatch(
        /^error: PostgreSQL refused a statement: permission denied for table \w+ \(SQLSTATE 42501\)/,
      );
      expect(denied.err).toMatch(/ran `gateway-ingest migrate`/);
      expect(denied.err).not.toMatch(/select|Failed query/);
    } finally {
      await db.db.execute(sql.raw(`drop role ${url.username}`));
    }

    const port = await freePort();
    const locked = runRedis(port, ['--requirepass', 'sekret']);
    const admin = new Redis(`redis://:sekret@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    admin.on('error', () => undefined);
    try {
      await waitFor(async () => (await admin.ping().catch(() => null)) === 'PONG', 10_000, 'redis');
      const range = ['backfill', 'earthquakes', '--from', '2025-01-01', '--to', '2025-01-02'];
      const noauth = await run(range, { ...env, REDIS_URL: `redis://127.0.0.1:${port}` });
      expect(noauth.code).toBe(1);
      expect(noauth.err).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+ refused the credentials \(NOAUTH/);
      const wrong = await run(range, { ...env, REDIS_URL: `redis://:nope@127.0.0.1:${port}` });
      expect(wrong.err).toMatch(/redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ refused the credentials \(WRONGPASS/);
      expect(wrong.err).not.toMatch(/nope/);
    } finally {
      admin.disconnect();
      await locked.stop();
    }
  });

  it('a worker against a database that takes no writes (a replica) exits 1 at once, naming it', async () => {
    const replica = await createTestDatabase();
    try {
      const name = new URL(replica.url).pathname.slice(1);
      await replica.db.execute(sql.raw(`alter database "${name}" set default_transaction_read_only = on`));
      const r = await run(['worker'], { ...env, DATABASE_URL: replica.url });
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/takes no writes \(a standby or a read replica.*DATABASE_URL must name the primary/);
      expect(r.ms).toBeLessThan(8_000);
    } finally {
      await replica.drop();
    }
  });

  it('--help works on every command', async () => {
    for (const args of [
      ['--help'],
      ['backfill', 'earthquakes', '--help'],
      ['backfill', 'indicators', '--help'],
      ['status', '--help'],
      ['worker', '--help'],
      ['start', '--help'],
      ['migrate', '--help'],
    ]) {
      const r = await run(args, env);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/Usage: gateway-ingest/);
    }
  });

  it('the client sends the key as X-API-Key when configured', async () => {
    const gateway = new UndiciGateway({ baseUrl: emulator.url, key: KEY, authHeader: 'x-api-key', timeoutMs: 5_000 });
    const a = await gateway.queryIndicator({
      provider: 'development-indicators',
      country: 'DEU',
      indicator: 'SP.POP.TOTL',
      start_year: 2000,
      end_year: 2001,
    });
    await gateway.close();
    expect(a.ok).toBe(true);
    expect(a.record.request).not.toHaveProperty('invocation_id');
  });
});
