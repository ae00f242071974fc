/**
 * A PostgreSQL connection that goes silent (no reset, no close) is destroyed after the silence
 * timeout: its statement fails as a lost connection, whoever listens hears why, and the next
 * statement runs on a new connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, type DbHandle } from '../../src/db/connection.js';
import { startSilenceProxy, type SilenceProxy } from '../faults/support/silence-proxy.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

const SILENCE_MS = 1_000;

describe('a silent PostgreSQL connection', () => {
  let test: TestDatabase;
  let proxy: SilenceProxy;
  let handle: DbHandle;

  beforeAll(async () => {
    test = await createTestDatabase();
    const url = new URL(test.url);
    proxy = await startSilenceProxy(Number(url.port || 5432));
    url.port = String(proxy.port);
    handle = openDb(url.toString(), { max: 2, silenceTimeoutMs: SILENCE_MS });
  });

  afterAll(async () => {
    await handle?.close();
    await proxy?.close();
    await test?.drop();
  });

  it('is destroyed after the timeout, heard by listeners, and the next statement opens a new one', async () => {
    expect((await handle.pool.query<{ n: number }>('select 1 as n')).rows).toEqual([{ n: 1 }]);
    const heard: string[] = [];
    const unhear = handle.onSilence((e) => heard.push(e.message));
    proxy.silenceOpen();
    const startedAt = Date.now();
    const failed = await handle.pool.query('select 2').then(
      () => null,
      (e: unknown) => e as { code?: string },
    );
    expect(failed?.code).toBe('ETIMEDOUT');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(SILENCE_MS - 50);
    expect(heard).toEqual([`PostgreSQL connection silent for ${SILENCE_MS} ms: destroyed`]);
    unhear();
    expect((await handle.pool.query<{ n: number }>('select 3 as n')).rows).toEqual([{ n: 3 }]);
    expect(heard).toHaveLength(1);
  });
});
