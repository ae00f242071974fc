import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { dataFolder } from '@gateway-ingest/emulator';
import { createTestDatabase, redisUrl, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { spawnCli } from '../support/run-cli.js';

/** Distinctive enough that any occurrence is the key, never a coincidence. */
const KEY = 'leakcheck-Kx7Q-9f3e2d1c-secret';
/** A wrong key is sent too (and refused): it must not leak either. */
const WRONG_KEY = 'leakcheck-Wz4P-0a1b2c3d-wrong';
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;

interface Run {
  args: string[];
  env: Record<string, string>;
}

/** Every text in the database: each row of each table, as JSON. */
async function databaseTexts(db: TestDatabase): Promise<{ table: string; text: string }[]> {
  const tables = await db.db.execute<{ name: string }>(sql`
    select format('%I.%I', table_schema, table_name) as name from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`);
  const texts: { table: string; text: string }[] = [];
  for (const { name } of tables.rows) {
    const rows = await db.db.execute<{ j: string }>(sql.raw(`select row_to_json(t)::text as j from ${name} t`));
    texts.push(...rows.rows.map((r) => ({ table: name, text: r.j })));
  }
  return texts;
}

/** What one Redis key holds, whatever its type, as strings. */
async function redisValues(redis: Redis, key: string): Promise<string[]> {
  const type = await redis.type(key);
  if (type === 'string') return [(await redis.get(key)) ?? ''];
  if (type === 'hash') return Object.entries(await redis.hgetall(key)).flat();
  if (type === 'list') return redis.lrange(key, 0, -1);
  if (type === 'set') return redis.smembers(key);
  if (type === 'zset') return redis.zrange(key, 0, -1);
  if (type === 'stream') return (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]);
  return [`<unread type ${type}>`];
}

/** Every key under the prefix and everything it holds. */
async function redisTexts(redis: Redis, prefix: string): Promise<{ key: string; text: string }[]> {
  const texts: { key: string; text: string }[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) texts.push({ key, text: [key, ...(await redisValues(redis, key))].join('\n') });
  } while (cursor !== '0');
  return texts;
}

const leaks = <T extends { text: string }>(texts: T[]): T[] =>
  texts.filter((t) => t.text.includes(KEY) || t.text.includes(WRONG_KEY));

/**
 * A gateway refusing every call while quoting the credential it was sent: in its message, its
 * execution's ids and its outcome, as a careless gateway may.
 */
async function echoingGateway(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const sent = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '');
    req.resume();
    req.on('end', () => {
      const execution = { id: `exec-${sent}`, invocation_id: sent, outcome: `refused ${sent}` };
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 401, message: `credential not activated: ${sent}`, data: { execution } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('MARKET_KEY appears nowhere', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let echo: { url: string; server: Server };
  let redis: Redis;
  let prefix: string;
  const outputs: { run: string; text: string }[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ key: KEY, earthquakeFiles: [MONTH] });
    echo = await echoingGateway();
    prefix = uniquePrefix();
    redis = new Redis(`${redisUrl()}/2`);
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: `${redisUrl()}/2`,
      GATEWAY_BASE_URL: emulator.url,
      MARKET_KEY: KEY,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'trace',
      RETRY_BASE_DELAY_MS: '20',
      JOB_ATTEMPTS: '2',
    };
    const indicators = [
      'backfill',
      'indicators',
      '--indicator',
      'SP.POP.TOTL',
      '--country',
      'USA,WLD',
      '--from-year',
      '2000',
      '--to-year',
      '2010',
      '--inline',
    ];
    const runs: Run[] = [
      { args: indicators, env },
      {
        args: [
          'backfill',
          'earthquakes',
          '--from',
          '2025-05-10',
          '--to',
          '2025-05-11',
          '--min-magnitude',
          '4',
          '--inline',
        ],
        env: { ...env, GATEWAY_AUTH_HEADER: 'x-api-key' },
      },
      // Failing calls: a wrong path (404), nothing listening (connection refused), a refused key (401).
      {
        args: [...indicators, '--country', 'DEU', '--refresh'],
        env: { ...env, GATEWAY_BASE_URL: `${emulator.url}/wrong` },
      },
      {
        args: [...indicators, '--country', 'CHN', '--refresh'],
        // No grace: a gateway away would otherwise be waited out for an hour.
        env: {
          ...env,
          GATEWAY_BASE_URL: 'http://127.0.0.1:1',
          GATEWAY_AUTH_HEADER: 'x-api-key',
          GATEWAY_OUTAGE_GRACE_MS: '0',
        },
      },
      { args: [...indicators, '--country', 'IND', '--refresh'], env: { ...env, MARKET_KEY: WRONG_KEY } },
      { args: [...indicators, '--country', 'BRA', '--refresh'], env: { ...env, GATEWAY_BASE_URL: echo.url } },
      { args: ['status', '--json'], env },
      { args: ['status'], env },
    ];
    for (const r of runs) {
      const cli = spawnCli(r.args, r.env);
      const { code } = await cli.exited;
      outputs.push({ run: `${r.args.join(' ')} (exit ${code})`, text: `${cli.stdout()}\n${cli.stderr()}` });
    }
  });

  afterAll(async () => {
    const keys = (await redisTexts(redis, prefix)).map((t) => t.key);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    echo.server.close();
    await emulator.close();
    await db.drop();
  });

  it('the runs did real work and failed where meant to', () => {
    const [ok, quakes, notFound, refused, badKey, echoed] = outputs;
    expect(ok!.run).toMatch(/exit 0/);
    expect(quakes!.run).toMatch(/exit 0/);
    for (const failing of [notFound, refused, badKey, echoed]) expect(failing!.run).toMatch(/exit 1/);
    expect(echoed!.text).toMatch(/credential not activated: Bearer \*\*\*/);
    expect(notFound!.text).toMatch(/404/);
    expect(refused!.text).toMatch(/ECONNREFUSED/);
    // LOG_LEVEL=trace: whatever is logged at any level is in the searched output.
    expect(outputs.map((o) => o.text).join('')).toMatch(/"level":\d+/);
  });

  it('not in stdout or stderr, at log level trace', () => {
    expect(leaks(outputs).map((o) => o.run)).toEqual([]);
  });

  it('not in any table of the database', async () => {
    const texts = await databaseTexts(db);
    expect(texts.some((t) => t.table === 'public.gateway_executions')).toBe(true);
    expect(leaks(texts).map((t) => `${t.table}: ${t.text}`)).toEqual([]);
  });

  it('not in any Redis key or value under the queue prefix (job data included)', async () => {
    const texts = await redisTexts(redis, prefix);
    expect(texts.length).toBeGreaterThan(0);
    expect(leaks(texts).map((t) => t.key)).toEqual([]);
  });

  it('the searches would have found it', async () => {
    await redis.hset(`${prefix}:canary`, 'data', JSON.stringify({ key: KEY }));
    await db.db.execute(sql`create table leak_canary (note jsonb)`);
    await db.db.execute(sql`insert into leak_canary values (${JSON.stringify({ header: `Bearer ${KEY}` })}::jsonb)`);
    expect(leaks(await redisTexts(redis, prefix)).map((t) => t.key)).toEqual([`${prefix}:canary`]);
    expect(leaks(await databaseTexts(db)).map((t) => t.table)).toEqual(['public.leak_canary']);
  });
});
