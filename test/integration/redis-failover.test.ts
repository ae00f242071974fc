import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionError } from '../../src/errors.js';
import { assertRedisReachable, openRedis } from '../../src/queue/redis.js';
import { freePort, hasRedisServer, runRedis } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

/**
 * A Redis failover demotes the primary that open connections reached to a replica, which refuses
 * every write with READONLY, while the address names the new primary. Played here by one server
 * demoted (REPLICAOF another) and promoted again: a connection of the product's retries the refused
 * write until the address takes writes, and a command started against a replica says so.
 */
describe.skipIf(!hasRedisServer)('a Redis demoted to a replica under the product', () => {
  let primary: ReturnType<typeof runRedis>;
  let other: ReturnType<typeof runRedis>;
  let url: string;
  let otherPort: number;
  let admin: Redis;

  const role = async () => ((await admin.call('role')) as unknown[])[0];

  beforeAll(async () => {
    const port = await freePort();
    otherPort = await freePort();
    primary = runRedis(port);
    other = runRedis(otherPort);
    url = `redis://127.0.0.1:${port}`;
    admin = new Redis(url, { maxRetriesPerRequest: 1 });
    await waitFor(async () => (await admin.ping().catch(() => null)) === 'PONG', 10_000, 'redis');
  });

  afterAll(async () => {
    admin.disconnect();
    await primary.stop();
    await other.stop();
  });

  it('a write refused as READONLY is sent again until the address takes writes, and is not lost', async () => {
    const redis = openRedis(url, 'worker');
    redis.on('error', () => undefined);
    try {
      expect(await redis.set('k', 'before')).toBe('OK');
      await admin.call('replicaof', '127.0.0.1', String(otherPort));
      await waitFor(async () => (await role()) === 'slave', 10_000, 'the demotion');
      // Refused now: on the code before, this write failed with READONLY at once.
      const write = redis.set('k', 'during');
      const outcome = write.then(
        () => 'written',
        (e: Error) => e.message,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      await admin.call('replicaof', 'no', 'one');
      expect(await outcome).toBe('written');
      expect(await admin.get('k')).toBe('during');
    } finally {
      redis.disconnect();
    }
  });

  it('a command started against a replica says so at once, naming the URL', async () => {
    await admin.call('replicaof', '127.0.0.1', String(otherPort));
    try {
      await waitFor(async () => (await role()) === 'slave', 10_000, 'the demotion');
      await expect(assertRedisReachable(url)).rejects.toThrow(
        /is a read-only replica: REDIS_URL must name the primary/,
      );
    } finally {
      await admin.call('replicaof', 'no', 'one');
    }
    await expect(assertRedisReachable(url)).resolves.toBeUndefined();
  });

  it('READONLY, met anyway, is an outage of our Redis', () => {
    const refused = new Error("READONLY You can't write against a read only replica.");
    expect(isConnectionError(refused)).toBe(true);
    expect(isConnectionError(new Error('ERR unknown command'))).toBe(false);
  });
});
