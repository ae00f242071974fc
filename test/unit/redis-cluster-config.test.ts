import { describe, expect, it } from 'vitest';
import { clusterQueuePrefix, parseEnv } from '../../src/config/env.js';
import { ConfigError } from '../../src/errors.js';
import { DEFAULT_REDIS_SILENCE_MS, REDIS_CONNECT_TIMEOUT_MS, redisClusterOptions } from '../../src/queue/redis.js';

const message = (env: Record<string, string>): string => {
  try {
    parseEnv(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('parseEnv accepted it');
};

describe('REDIS_CLUSTER_NODES', () => {
  it('is unset by default: the single Redis of REDIS_URL, the prefix as given', () => {
    const env = parseEnv({ QUEUE_PREFIX: 'prod' });
    expect(env.redisCluster).toBeNull();
    expect(env.queuePrefix).toBe('prod');
  });

  it('reads the startup nodes (default port 6379, IPv6 in brackets, duplicates dropped) and the credentials', () => {
    const env = parseEnv({
      REDIS_CLUSTER_NODES: ' 10.0.0.1:7000, redis-2.internal ,[fd00::3]:7002,10.0.0.1:7000',
      REDIS_USERNAME: 'ingest',
      REDIS_PASSWORD: 'pw',
      REDIS_TLS: '1',
    });
    expect(env.redisCluster).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-2.internal', port: 6379 },
        { host: 'fd00::3', port: 7002 },
      ],
      username: 'ingest',
      password: 'pw',
      tls: true,
    });
  });

  it('ignores REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS without it: a single Redis takes them in REDIS_URL', () => {
    const env = parseEnv({ REDIS_PASSWORD: 'pw', REDIS_TLS: '1', REDIS_URL: 'redis://127.0.0.1:6379/2' });
    expect(env.redisCluster).toBeNull();
    expect(env.redisUrl).toBe('redis://127.0.0.1:6379/2');
  });

  it.each([
    ['10.0.0.1:0', '"10.0.0.1:0"'],
    ['10.0.0.1:70000', '"10.0.0.1:70000"'],
    ['10.0.0.1:7000,,10.0.0.2:7000', '""'],
    ['redis://10.0.0.1:7000', '"redis://10.0.0.1:7000"'],
    ['user@host:7000', '"user@host:7000"'],
  ])('refuses %s naming the entry', (value, entry) => {
    expect(message({ REDIS_CLUSTER_NODES: value })).toContain(`REDIS_CLUSTER_NODES: ${entry} is not host:port`);
  });

  it('refuses REDIS_TLS=yes', () => {
    expect(message({ REDIS_CLUSTER_NODES: 'h:1', REDIS_TLS: 'yes' })).toContain('REDIS_TLS');
  });

  it('never puts REDIS_PASSWORD into an error message', () => {
    expect(message({ REDIS_CLUSTER_NODES: 'h:x', REDIS_PASSWORD: 'super-secret' })).not.toContain('super-secret');
  });
});

describe('QUEUE_PREFIX on a cluster', () => {
  it.each([
    ['gateway-ingest', '{gateway-ingest}'],
    ['{gateway-ingest}', '{gateway-ingest}'],
    ['prod-{eu}', 'prod-{eu}'],
    ['{eu}.prod', '{eu}.prod'],
  ])('%s becomes %s: every key of every queue in one slot', (given, effective) => {
    expect(clusterQueuePrefix(given)).toBe(effective);
    expect(parseEnv({ QUEUE_PREFIX: given, REDIS_CLUSTER_NODES: '10.0.0.1:7000' }).queuePrefix).toBe(effective);
  });

  it('is wrapped from the default too', () => {
    expect(parseEnv({ REDIS_CLUSTER_NODES: '10.0.0.1:7000' }).queuePrefix).toBe('{gateway-ingest}');
  });

  it('stays exactly as given on a single Redis, braces included', () => {
    expect(parseEnv({ QUEUE_PREFIX: 'gateway-ingest' }).queuePrefix).toBe('gateway-ingest');
    expect(parseEnv({ QUEUE_PREFIX: '{gateway-ingest}' }).queuePrefix).toBe('{gateway-ingest}');
  });

  it.each(['{}', 'a{b}{c}', '{a{b}}', 'a}b{', '{open', 'close}', 'has space', 'a:b', 'x'.repeat(65)])(
    'refuses %s',
    (prefix) => {
      expect(message({ QUEUE_PREFIX: prefix })).toContain('QUEUE_PREFIX');
    },
  );
});

describe('cluster connection options', () => {
  const settings = { nodes: [{ host: 'redis.internal', port: 7000 }], username: 'u', password: 'p', tls: true };

  it("keep the single node's deadlines on every node; workers never give up a command", () => {
    const worker = redisClusterOptions(settings, 'worker', 20_000);
    expect(worker.redisOptions).toMatchObject({
      maxRetriesPerRequest: null,
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      socketTimeout: 20_000,
      keepAlive: 5_000,
      username: 'u',
      password: 'p',
      tls: {},
    });
    expect(worker.enableReadyCheck).toBe(true);
    expect(worker.clusterRetryStrategy?.(3)).toBe(600);
    expect(worker.clusterRetryStrategy?.(1_000)).toBe(5_000);
    const producer = redisClusterOptions(settings, 'producer');
    expect(producer.redisOptions).toMatchObject({ maxRetriesPerRequest: 3, socketTimeout: DEFAULT_REDIS_SILENCE_MS });
  });

  it('with TLS leave name resolution to the connection, so the certificate is checked against the name', () => {
    const resolved: string[] = [];
    redisClusterOptions(settings, 'worker').dnsLookup?.('redis.internal', (_err, address) => resolved.push(address));
    expect(resolved).toEqual(['redis.internal']);
  });

  it('without TLS or credentials carry none', () => {
    const plain = redisClusterOptions({ ...settings, username: null, password: null, tls: false }, 'worker');
    expect(plain.dnsLookup).toBeUndefined();
    expect(plain.redisOptions).not.toHaveProperty('tls');
    expect(plain.redisOptions).not.toHaveProperty('password');
    expect(plain.redisOptions).not.toHaveProperty('username');
  });
});
