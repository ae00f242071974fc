import { describe, expect, it } from 'vitest';
import { parseEarthquakeFlags } from '../../src/cli/commands/backfill.js';
import { UsageError } from '../../src/cli/exit.js';
import { parseInstantFlag } from '../../src/cli/flags.js';
import { ConfigError, parseEnv, redactUrl } from '../../src/config/env.js';

describe('parseEnv', () => {
  it('applies the contract defaults', () => {
    const env = parseEnv({});
    expect(env.databaseUrl).toBe('postgres://postgres:postgres@127.0.0.1:5432/gateway_ingest');
    expect(env.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(env.gateway).toEqual({ baseUrl: null, key: null, authHeader: 'authorization', timeoutMs: 30_000 });
    expect(env.httpPort).toBe(9464);
  });

  it('reads every variable, a Redis database index included', () => {
    const env = parseEnv({
      REDIS_URL: 'redis://127.0.0.1:6379/3',
      GATEWAY_BASE_URL: 'https://gw.example/',
      MARKET_KEY: 'k',
      GATEWAY_AUTH_HEADER: 'x-api-key',
      GATEWAY_TIMEOUT_MS: '5000',
      QUEUE_PREFIX: 'prod',
      WORKER_CONCURRENCY: '8',
    });
    expect(env.redisUrl).toBe('redis://127.0.0.1:6379/3');
    expect(env.gateway).toEqual({ baseUrl: 'https://gw.example', key: 'k', authHeader: 'x-api-key', timeoutMs: 5000 });
    expect(env.queuePrefix).toBe('prod');
    expect(env.workerConcurrency).toBe(8);
  });

  it.each([
    ['GATEWAY_AUTH_HEADER', 'bearer'],
    ['GATEWAY_TIMEOUT_MS', '-1'],
    ['WORKER_CONCURRENCY', 'many'],
    ['DATABASE_URL', 'mysql://x'],
    ['QUEUE_PREFIX', 'has space'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => parseEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => parseEnv({ [name]: value })).toThrow(name);
  });

  it('never puts the key into an error message', () => {
    try {
      parseEnv({ MARKET_KEY: 'super-secret', WORKER_CONCURRENCY: 'x' });
    } catch (e) {
      expect((e as Error).message).not.toContain('super-secret');
    }
  });

  it('redacts passwords in URLs', () => {
    expect(redactUrl('postgres://u:pw@h:5432/db')).toBe('postgres://u:***@h:5432/db');
  });
});

describe('earthquake backfill flags', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  it('takes dates as UTC midnight and RFC 3339 timestamps as given', () => {
    expect(parseInstantFlag('--from', '2015-01-01')).toBe(Date.parse('2015-01-01T00:00:00Z'));
    expect(parseInstantFlag('--from', '2015-01-01T06:00:00+02:00')).toBe(Date.parse('2015-01-01T04:00:00Z'));
  });
  it.each([
    [{ from: '2015-02-30' }, /--from: "2015-02-30"/],
    [{ from: 'yesterday' }, /--from/],
    [{ from: '2030-01-01' }, /--from: "2030-01-01" is in the future/],
    [{ from: '2020-01-01', to: '2019-01-01' }, /--to/],
    [{ from: '2020-01-01', minMagnitude: '11' }, /--min-magnitude: "11"/],
    [{ from: '2020-01-01', latitude: '10', longitude: '10' }, /together/],
    [{ from: '2020-01-01', latitude: '10', longitude: '10', radiusKm: '0' }, /--radius-km: "0"/],
    [{ from: '2020-01-01', latitude: '91', longitude: '10', radiusKm: '5' }, /--latitude: "91"/],
  ])('refuses %o', (flags, message) => {
    expect(() => parseEarthquakeFlags(flags, now)).toThrow(UsageError);
    expect(() => parseEarthquakeFlags(flags, now)).toThrow(message);
  });
  it('clamps --to to now and builds the circle', () => {
    const p = parseEarthquakeFlags({ from: '2026-11-01', to: '2027-01-01', latitude: '36.7', longitude: '-119.4', radiusKm: '400', minMagnitude: '2.5' }, now);
    expect(p.toMs).toBe(now);
    expect(p.filters).toEqual({ minMagnitude: 2.5, circle: { latitude: 36.7, longitude: -119.4, radiusKm: 400 } });
  });
});
