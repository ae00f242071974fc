import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { OPERATIONS } from '../../src/domain/spec.js';
import { packageRoot } from '../../src/paths.js';
import { createTestDatabase, redisUrl, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { ensureStopped, spawnCli } from '../support/run-cli.js';
import { waitFor } from '../support/service.js';

const KEY = 'cli-edges-key-0123456789';
const UNREACHABLE_DB = 'postgres://postgres@127.0.0.1:1/x';
const BACKFILL = [
  'backfill',
  'indicators',
  '--indicator',
  'SP.POP.TOTL',
  '--country',
  'USA',
  '--from-year',
  '2000',
  '--to-year',
  '2005',
];

async function run(args: string[], env: Record<string, string>) {
  const cli = spawnCli(args, env);
  const { code } = await cli.exited;
  return { code, out: cli.stdout(), err: cli.stderr() };
}

/** A stack trace on stderr means an error reached the user unexplained. */
const STACK = /^\s+at /m;

describe('the CLI at the edges', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ key: KEY, earthquakeFiles: [] });
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: `${redisUrl()}/2`,
      GATEWAY_BASE_URL: emulator.url,
      MARKET_KEY: KEY,
      QUEUE_PREFIX: uniquePrefix(),
      LOG_LEVEL: 'warn',
      RETRY_BASE_DELAY_MS: '20',
    };
  });

  afterAll(async () => {
    await emulator.close();
    await db.drop();
  });

  it('--version prints the package version; a bare command prints help and exits 2', async () => {
    const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
    const v = await run(['--version'], env);
    expect(v.code).toBe(0);
    expect(v.out.trim()).toBe(version);
    const bare = await run([], env);
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/Usage: gateway-ingest/);
  });

  it.each([
    ['a line break', `${KEY}\nX-Injected: 1`],
    ['a character outside Latin-1', `${KEY}\u20ac`],
  ])('refuses a MARKET_KEY with %s before doing anything, never printing it', async (_what, key) => {
    const r = await run([...BACKFILL, '--inline'], { ...env, MARKET_KEY: key });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/MARKET_KEY: contains a character not allowed in an HTTP header value/);
    expect(`${r.out}${r.err}`).not.toContain(KEY);
  });

  it.each(['GATEWAY_BASE_URL', 'DATABASE_URL', 'REDIS_URL'])(
    '%s=foo exits 2 naming the variable, without a stack trace',
    async (name) => {
      const r = await run(['status'], { ...env, [name]: 'foo' });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(new RegExp(`${name}: is not a valid absolute URL \\(expected e\\.g\\. `));
      expect(r.err).not.toMatch(STACK);
    },
  );

  it.each([
    ['backfill --inline', [...BACKFILL, '--inline']],
    ['worker', ['worker']],
    ['start', ['start', '--config', 'test/fixtures/jobs/example.yaml']],
  ])('%s refuses plain http:// off this machine unless allowed', async (_name, args) => {
    const remote = { ...env, GATEWAY_BASE_URL: 'http://gateway.example.invalid:8080', DATABASE_URL: UNREACHABLE_DB };
    const refused = await run(args, remote);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(
      /GATEWAY_BASE_URL is plain http:\/\/ to gateway\.example\.invalid:8080.*MARKET_KEY would travel in clear/,
    );
    // Allowed, the command gets past the gateway settings and stops at the next thing: PostgreSQL.
    for (const allowed of [
      run([...args, '--allow-insecure-http'], remote),
      run(args, { ...remote, GATEWAY_ALLOW_INSECURE_HTTP: '1' }),
    ]) {
      const r = await allowed;
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/cannot reach PostgreSQL/);
    }
  });

  it('--wait with no worker running says so within seconds, and how to start one', async () => {
    // A queue prefix of its own: no worker of another test takes these jobs.
    const alone = spawnCli([...BACKFILL, '--country', 'CHN', '--wait'], { ...env, QUEUE_PREFIX: uniquePrefix() });
    try {
      // The note comes a few seconds into the wait; the start before it is slow on a loaded machine.
      await waitFor(async () => /no worker is taking jobs/.test(alone.stderr()), 30_000, 'the no-worker note');
      expect(alone.stderr()).toContain('start one (gateway-ingest worker) or re-run with --inline');
    } finally {
      alone.child.kill('SIGTERM');
      await ensureStopped(alone);
    }
  });

  it('status exits 0 while nothing has failed', async () => {
    const ok = await run([...BACKFILL, '--inline'], env);
    expect(ok.code).toBe(0);
    expect((await run(['status'], env)).code).toBe(0);
    expect((await run(['status', '--json'], env)).code).toBe(0);
  });

  it('an --inline backfill with nothing left to do exits 0 at once, with no stray Redis error', async () => {
    expect((await run([...BACKFILL, '--inline'], env)).code).toBe(0);
    // Everything is ingested: the workers start and close at once (BullMQ's close of connections
    // still being set up used to end the process with "Connection is closed.").
    for (let i = 0; i < 3; i++) {
      const again = await run([...BACKFILL, '--inline'], env);
      expect(again.err).not.toContain('Connection is closed');
      expect(again.err).not.toMatch(STACK);
      expect(again.code).toBe(0);
    }
  });

  it('a 404 says the base URL is wrong, is not retried, and makes status exit 1', async () => {
    const wrong = { ...env, GATEWAY_BASE_URL: `${emulator.url}/wrong-prefix`, JOB_ATTEMPTS: '3' };
    const r = await run([...BACKFILL, '--country', 'DEU', '--inline'], wrong);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/finished: 0 done, 1 failed/);
    const path = OPERATIONS.indicator.path;
    const audit = await db.db.execute<{ error_kind: string; error_detail: string }>(
      sql`select error_kind, error_detail from gateway_executions where http_status = 404`,
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]!.error_kind).toBe('parameters');
    expect(audit.rows[0]!.error_detail).toContain(`the gateway answered 404 Not Found for ${path}`);
    expect(audit.rows[0]!.error_detail).toContain('check GATEWAY_BASE_URL');

    const text = await run(['status'], env);
    expect(text.code).toBe(1);
    expect(text.out).toMatch(/failed .*404 Not Found.*check GATEWAY_BASE_URL/);
    const json = await run(['status', '--json'], env);
    expect(json.code).toBe(1);
    expect(() => JSON.parse(json.out) as unknown).not.toThrow();
  });

  it('status lists failed windows in time order, whatever order they failed in', async () => {
    await db.db.execute(sql`insert into ingest_streams (stream_key, operation, params)
      values ('earthquake:m6', 'earthquake', '{"min_magnitude": 6, "circle": null}') on conflict do nothing`);
    const failed = [
      ['2019-02-27T00:00:00Z', '2019-03-29T23:59:58Z', '2026-01-03'],
      ['2016-09-11T00:00:00Z', '2016-10-11T23:59:58Z', '2026-01-01'],
      ['2017-05-01T00:00:00Z', '2017-05-31T23:59:58Z', '2026-01-02'],
    ];
    for (const [start, end, at] of failed)
      await db.db.execute(sql`insert into ingest_partitions (stream_key, partition_key, operation, window_start,
          window_end, state, last_error, last_error_kind, updated_at)
        values ('earthquake:m6', ${`${start}/${end}`}, 'earthquake', ${start}::timestamptz, ${end}::timestamptz,
          'failed', 'gave up', 'gave_up', ${at}::timestamptz)`);
    const text = await run(['status'], env);
    const listed = [...text.out.matchAll(/failed (\d{4}-\d\d-\d\d)T/g)].map((m) => m[1]);
    expect(listed).toEqual(['2016-09-11', '2017-05-01', '2019-02-27']);
    expect(text.out).toMatch(/^jobs file: /);
  });
});
