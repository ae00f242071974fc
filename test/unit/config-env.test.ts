import { describe, expect, it } from 'vitest';
import { parseEarthquakeFlags, parseIndicatorFlags } from '../../src/cli/backfill-request.js';
import { parseInstantFlag } from '../../src/cli/flags.js';
import { insecureGatewayProblem, isLoopbackHost, parseEnv, redactUrl } from '../../src/config/env.js';
import { gatewayFromEnv } from '../../src/cli/connections.js';
import { loadEnv } from '../../src/cli/runtime.js';
import { ConfigError, UsageError } from '../../src/errors.js';

describe('parseEnv', () => {
  it('applies the contract defaults', () => {
    const env = parseEnv({});
    expect(env.databaseUrl).toBe('postgres://postgres:postgres@127.0.0.1:5432/gateway_ingest');
    expect(env.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(env.gateway).toEqual({
      baseUrl: null,
      key: null,
      authHeader: 'authorization',
      timeoutMs: 30_000,
      allowInsecureHttp: false,
    });
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
    expect(env.gateway).toEqual({
      baseUrl: 'https://gw.example',
      key: 'k',
      authHeader: 'x-api-key',
      timeoutMs: 5000,
      allowInsecureHttp: false,
    });
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

  const message = (env: Record<string, string>): string => {
    try {
      parseEnv(env);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('parseEnv accepted it');
  };

  it.each([
    ['a line break', 'secret-key\nX-Injected: 1', 'U+000A'],
    ['a carriage return', 'secret-key\r', 'U+000D'],
    ['a NUL', 'secret\u0000key', 'U+0000'],
    ['DEL', 'secret\u007fkey', 'U+007F'],
    ['a character outside Latin-1', 'secret-key-\u20ac', 'U+20AC'],
    ['an emoji', 'secret-key-\u{1f511}', 'U+1F511'],
  ])('refuses a MARKET_KEY with %s, naming the variable and never the key', (_what, key, code) => {
    const text = message({ MARKET_KEY: key });
    expect(text).toContain('MARKET_KEY');
    expect(text).toContain(code);
    expect(text).toMatch(/not allowed in an HTTP header value/);
    expect(text).not.toContain('secret');
  });

  it('refuses a MARKET_KEY with surrounding whitespace, which HTTP would strip', () => {
    expect(message({ MARKET_KEY: ' secret-key' })).toMatch(/MARKET_KEY: starts or ends with whitespace/);
    expect(message({ MARKET_KEY: 'secret-key\t' })).not.toContain('secret');
  });

  it('accepts a MARKET_KEY of visible ASCII and Latin-1', () => {
    expect(parseEnv({ MARKET_KEY: 'sk_live-AZaz09.~+/=' }).gateway.key).toBe('sk_live-AZaz09.~+/=');
    expect(parseEnv({ MARKET_KEY: 'cl\u00e9 with space' }).gateway.key).toBe('cl\u00e9 with space');
  });

  it.each([
    ['GATEWAY_BASE_URL', 'foo', /GATEWAY_BASE_URL: is not a valid absolute URL \(expected e\.g\. https:\/\//],
    ['DATABASE_URL', 'foo', /DATABASE_URL: is not a valid absolute URL \(expected e\.g\. postgres:\/\//],
    ['REDIS_URL', 'not a url', /REDIS_URL: is not a valid absolute URL \(expected e\.g\. redis:\/\//],
    ['GATEWAY_BASE_URL', 'ftp://gw.example', /GATEWAY_BASE_URL: must be a URL with scheme http: or https:/],
    ['REDIS_URL', 'postgres://h/db', /REDIS_URL: must be a URL with scheme redis: or rediss:/],
  ])('refuses %s=%s saying what is wrong, without a TypeError', (name, value, expected) => {
    expect(message({ [name]: value })).toMatch(expected);
  });

  it('reports every bad URL at once', () => {
    const text = message({ GATEWAY_BASE_URL: 'foo', DATABASE_URL: 'bar', REDIS_URL: 'baz' });
    expect(text.split('\n').filter((l) => /is not a valid absolute URL/.test(l))).toHaveLength(3);
  });

  it.each([
    [{}, false],
    [{ GATEWAY_ALLOW_INSECURE_HTTP: '1' }, true],
    [{ GATEWAY_ALLOW_INSECURE_HTTP: 'true' }, true],
    [{ GATEWAY_ALLOW_INSECURE_HTTP: '0' }, false],
  ])('reads GATEWAY_ALLOW_INSECURE_HTTP from %o', (env, allowed) => {
    expect(parseEnv(env).gateway.allowInsecureHttp).toBe(allowed);
  });

  it('refuses GATEWAY_ALLOW_INSECURE_HTTP=maybe', () => {
    expect(message({ GATEWAY_ALLOW_INSECURE_HTTP: 'maybe' })).toContain('GATEWAY_ALLOW_INSECURE_HTTP');
  });

  it('redacts passwords in URLs', () => {
    expect(redactUrl('postgres://u:pw@h:5432/db')).toBe('postgres://u:***@h:5432/db');
  });
});

describe('plain http to the gateway', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', '[::1]', '[::ffff:7f00:1]'])('treats %s as this machine', (host) => {
    expect(isLoopbackHost(new URL(`http://${host}:8080`).hostname)).toBe(true);
  });

  it.each(['10.0.0.1', 'gw.example', '[::2]', '128.0.0.1', 'localhost.example'])(
    'treats %s as another machine',
    (host) => {
      expect(isLoopbackHost(new URL(`http://${host}`).hostname)).toBe(false);
    },
  );

  it('refuses http:// off this machine unless allowed, and says why', () => {
    expect(insecureGatewayProblem('http://gw.example:8080', false)).toMatch(
      /GATEWAY_BASE_URL is plain http:\/\/ to gw\.example:8080.*MARKET_KEY would travel in clear.*--allow-insecure-http.*GATEWAY_ALLOW_INSECURE_HTTP=1/,
    );
    expect(insecureGatewayProblem('http://gw.example:8080', true)).toBeNull();
    expect(insecureGatewayProblem('https://gw.example', false)).toBeNull();
    expect(insecureGatewayProblem('http://127.0.0.1:9999', false)).toBeNull();
    expect(insecureGatewayProblem('http://0x7f.1:9999', false)).toBeNull();
  });

  it('gatewayFromEnv refuses it as bad usage; the flag or the variable allows it', async () => {
    const env = { GATEWAY_BASE_URL: 'http://gw.example', MARKET_KEY: 'secret-key' };
    expect(() => gatewayFromEnv(loadEnv(env))).toThrow(UsageError);
    expect(() => gatewayFromEnv(loadEnv(env))).not.toThrow(/secret-key/);
    for (const resolved of [
      loadEnv(env, { allowInsecureHttp: true }),
      loadEnv({ ...env, GATEWAY_ALLOW_INSECURE_HTTP: '1' }),
    ]) {
      const gateway = gatewayFromEnv(resolved);
      expect(gateway.baseUrl).toBe('http://gw.example');
      await gateway.close();
    }
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
  it.each([
    [{ fromYear: '2010', toYear: '2000' }, '--from-year: --from-year 2010 is after --to-year 2000'],
    [{ toYear: '2027' }, '--to-year: --to-year 2027 is after the current year 2026'],
    [{ fromYear: '1959' }, '--from-year: --from-year 1959 is before 1960, the first year with data'],
    [{ toYear: '1950' }, '--to-year: --to-year 1950 is before 1960, the first year with data'],
  ])('an indicator year range %o names the flag at fault', (years, message) => {
    expect(() => parseIndicatorFlags({ indicator: ['SP.POP.TOTL'], country: ['US'], ...years }, 2026)).toThrow(
      new UsageError(message),
    );
  });
  it('clamps --to to now and builds the circle', () => {
    const p = parseEarthquakeFlags(
      {
        from: '2026-11-01',
        to: '2027-01-01',
        latitude: '36.7',
        longitude: '-119.4',
        radiusKm: '400',
        minMagnitude: '2.5',
      },
      now,
    );
    expect(p.toMs).toBe(now);
    expect(p.filters).toEqual({ minMagnitude: 2.5, circle: { latitude: 36.7, longitude: -119.4, radiusKm: 400 } });
  });
});
