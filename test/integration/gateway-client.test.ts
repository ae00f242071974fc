import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billedOf } from '../../src/db/audit.js';
import { MAX_BODY_BYTES } from '../../src/gateway/body.js';
import { attemptError, UndiciGateway } from '../../src/gateway/client.js';
import { packageRoot } from '../../src/paths.js';

/**
 * The client against a gateway that answers more events than `max_results` asked: within HTTP and
 * JSON, outside the spec. The answer must be refused (nothing to store, the window retried), and
 * its billing facts kept for the audit.
 */
const event = (id: string) => ({
  id,
  time: '2025-05-06T09:24:12Z',
  magnitude: 1.2,
  magnitude_type: 'ml',
  place: 'somewhere',
  latitude: 36.7,
  longitude: -116.3,
  depth_km: 5,
  tsunami_flag: false,
  url: null,
});

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const execution = { id: 'exec_1', invocation_id: 'inv_1', outcome: 'succeeded', usage: { units: 3 } };
      const result = {
        events: ['a', 'b', 'c'].map(event),
        source: { name: 'USGS', license: 'public domain', url: 'https://example.org' },
      };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ code: 0, data: { execution, result } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a gateway answering more events than max_results', () => {
  it('is an invalid response, billed as the gateway said, with no result to store', async () => {
    const gateway = new UndiciGateway({ baseUrl, key: 'k', authHeader: 'authorization', timeoutMs: 5_000 });
    try {
      const request = {
        provider: 'quake-catalog' as const,
        start_time: '2025-05-06T00:00:00Z',
        end_time: '2025-05-07T00:00:00Z',
      };
      const over = await gateway.queryEarthquakes({ ...request, max_results: 2 });
      expect(over.ok).toBe(false);
      expect(over.record).toMatchObject({
        errorKind: 'invalid_response',
        outcome: 'succeeded',
        billed: true,
        units: 3,
      });
      expect(over.record.errorDetail).toMatch(/holds 3 events, more than the max_results of 2 asked for/);
      const fits = await gateway.queryEarthquakes({ ...request, max_results: 3 });
      expect(fits.ok).toBe(true);
    } finally {
      await gateway.close();
    }
  });
});

/** A server that answers every request with `respond`. */
async function serving(respond: (res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => respond(res));
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, server: s };
}

/** A day's query, for the tests of how the client takes what comes back. */
const request = {
  provider: 'quake-catalog' as const,
  start_time: '2025-05-06T00:00:00Z',
  end_time: '2025-05-07T00:00:00Z',
};

describe('a body the client cannot take whole', () => {
  it('in a content coding the request did not ask for: a transport failure naming it, billing unknown', async () => {
    const { url, server: s } = await serving((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd' });
      res.end('(&\xb5/\xfd');
    });
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k3y', authHeader: 'authorization', timeoutMs: 5_000 });
    try {
      const got = await gateway.queryEarthquakes(request);
      expect(got.ok).toBe(false);
      expect(got.record).toMatchObject({ httpStatus: 200, errorKind: 'transport', outcome: null });
      expect(billedOf(got.record)).toBeNull();
      expect(got.record.errorDetail).toMatch(/content coding "zstd", which the request did not ask for/);
    } finally {
      await gateway.close();
      s.close();
    }
  });

  it(`past ${MAX_BODY_BYTES} bytes: cut off there, its execution still read`, async () => {
    const execution = { id: 'exec_big', invocation_id: 'inv', outcome: 'succeeded', usage: { units: 1 } };
    const head = `{"code":0,"data":{"execution":${JSON.stringify(execution)},"result":{"events":[{"place":"`;
    const { url, server: s } = await serving((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(head);
      const block = 'x'.repeat(1 << 20);
      let sent = 0;
      const more = (): void => {
        while (sent++ < 40) if (!res.write(block)) return void res.once('drain', more);
        res.end('"}]}}}');
      };
      more();
    });
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k', authHeader: 'authorization', timeoutMs: 10_000 });
    try {
      const got = await gateway.queryEarthquakes(request);
      expect(got.ok).toBe(false);
      expect(got.record).toMatchObject({ httpStatus: 200, errorKind: 'transport', outcome: 'succeeded', billed: true });
      expect(got.record.executionId).toBe('exec_big');
    } finally {
      await gateway.close();
      s.closeAllConnections();
      s.close();
    }
  });
});

describe('a gateway slower than GATEWAY_TIMEOUT_MS', () => {
  it('is waited for as long as its answers take, up to four times the setting, once one timed out', async () => {
    const execution = { id: 'exec_slow', invocation_id: 'inv', outcome: 'succeeded', usage: { units: 0 } };
    const source = { name: 'USGS', license: 'public domain', url: 'https://example.org' };
    let delayMs = 900;
    const { url, server: s } = await serving((res) => {
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ code: 0, data: { execution, result: { events: [], source } } }));
      }, delayMs);
    });
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k3y', authHeader: 'authorization', timeoutMs: 600 });
    const request = {
      provider: 'quake-catalog' as const,
      start_time: '2025-05-06T00:00:00Z',
      end_time: '2025-05-07T00:00:00Z',
    };
    const kinds = async (n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push((await gateway.queryEarthquakes(request)).record.errorKind);
      return out;
    };
    try {
      // Timed out at 600 ms, answered within 1,200; then waited for twice the 900 its answer took: a
      // gateway slower than the setting costs one call cut off (and perhaps billed), not every other one.
      expect(await kinds(3)).toEqual(['timeout', null, null]);
      delayMs = 2_000;
      // 1,800 ms twice, then 2,400: never more than four times the setting.
      expect(await kinds(4)).toEqual(['timeout', 'timeout', null, null]);
      // Fast answers halve what is waited for, down to the setting: 900 ms is past it again.
      delayMs = 50;
      expect(await kinds(6)).toEqual(Array(6).fill(null));
      delayMs = 900;
      expect(await kinds(1)).toEqual(['timeout']);
    } finally {
      await gateway.close();
      s.closeAllConnections();
      s.close();
    }
  });
});

describe('a gateway answering with a redirect', () => {
  it('is not followed (the key would go there): a parameter error naming where, never retried', async () => {
    let requests = 0;
    const { url, server: s } = await serving((res) => {
      requests++;
      res.writeHead(308, {
        location: 'https://gateway.example.org/v1/gateway/earthquake-standard/v1/earthquake-queries',
      });
      res.end();
    });
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k3y', authHeader: 'authorization', timeoutMs: 5_000 });
    try {
      const got = await gateway.queryEarthquakes({
        provider: 'quake-catalog',
        start_time: '2025-05-06T00:00:00Z',
        end_time: '2025-05-07T00:00:00Z',
      });
      expect(got.record).toMatchObject({ httpStatus: 308, errorKind: 'parameters' });
      expect(got.record.errorDetail).toMatch(/a redirect to https:\/\/gateway\.example\.org\/.*set GATEWAY_BASE_URL/);
      expect(attemptError(got.record, null).retryable).toBe(false);
      expect(requests).toBe(1);
    } finally {
      await gateway.close();
      s.close();
    }
  });
});

describe('a call that gets no answer', () => {
  it('is not billed when no connection carried it: nothing reached the gateway', async () => {
    // A port just closed: nothing listens there, and the connection is refused.
    const { url, server: s } = await serving(() => undefined);
    await new Promise<void>((resolve) => s.close(() => resolve()));
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k3y', authHeader: 'authorization', timeoutMs: 5_000 });
    try {
      const got = await gateway.queryEarthquakes(request);
      expect(got.record).toMatchObject({ httpStatus: null, errorKind: 'transport', unsent: true });
      expect(billedOf(got.record)).toBe(false);
    } finally {
      await gateway.close();
    }
  });

  it('is not billed when the TLS handshake refused the gateway: the request never left', async () => {
    const tls = join(packageRoot, 'test/fixtures/tls');
    const s = createHttpsServer({
      key: readFileSync(join(tls, 'self-signed.key')),
      cert: readFileSync(join(tls, 'self-signed.pem')),
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k3y', authHeader: 'authorization', timeoutMs: 5_000 });
    try {
      const got = await gateway.queryEarthquakes(request);
      expect(got.record).toMatchObject({ httpStatus: null, errorKind: 'transport', unsent: true });
      expect(got.record.errorDetail).toMatch(/self-signed certificate/);
      expect(billedOf(got.record)).toBe(false);
    } finally {
      await gateway.close();
      s.close();
    }
  });

  it('is billed unknown when the connection closed after the request was sent: the gateway may have run it', async () => {
    const { url, server: s } = await serving((res) => res.socket?.destroy());
    const gateway = new UndiciGateway({ baseUrl: url, key: 'k3y', authHeader: 'authorization', timeoutMs: 5_000 });
    try {
      const got = await gateway.queryEarthquakes(request);
      expect(got.record).toMatchObject({ httpStatus: null, errorKind: 'transport' });
      expect(got.record.unsent).toBeUndefined();
      expect(billedOf(got.record)).toBeNull();
    } finally {
      await gateway.close();
      s.close();
    }
  });
});
