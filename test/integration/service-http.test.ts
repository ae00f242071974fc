import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/connection.js';
import { openRedis } from '../../src/queue/redis.js';
import { startHttpServer, type RunningHttp } from '../../src/service/http.js';

describe('service http endpoints', () => {
  const servers: RunningHttp[] = [];
  const closers: Array<() => Promise<unknown> | void> = [];

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    for (const close of closers) await close();
  });

  it('readiness is 503 naming what is unreachable, while liveness stays 200', async () => {
    // Nothing listens on port 1: both refuse at once, as a restarting server would.
    const db = openDb('postgres://postgres@127.0.0.1:1/none');
    const redis = openRedis('redis://127.0.0.1:1/0', 'worker');
    redis.on('error', () => undefined);
    closers.push(() => db.close(), () => redis.disconnect());
    const server = await startHttpServer({
      port: 0,
      host: '127.0.0.1',
      registry: new Registry(),
      checks: { postgres: () => db.pool.query('select 1'), redis: () => redis.ping() },
    });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { status: string; failed: Record<string, string> };
    expect(body.status).toBe('unavailable');
    expect(Object.keys(body.failed).sort()).toEqual(['postgres', 'redis']);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('serves the registry as Prometheus text, 404 elsewhere, 405 for writes', async () => {
    const registry = new Registry();
    registry.setDefaultLabels({ test: 'yes' });
    const server = await startHttpServer({ port: 0, host: '127.0.0.1', registry, checks: {} });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(405);
  });
});
