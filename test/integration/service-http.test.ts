import { createServer, type Server, type ServerResponse } from 'node:http';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb } from '../../src/db/connection.js';
import { ServiceUnavailableError } from '../../src/errors.js';
import { listen } from '../../src/net-listen.js';
import { openRedis } from '../../src/queue/redis.js';
import { startHttpServer, type RunningHttp } from '../../src/service/http.js';
import { createTestDatabase, uniquePrefix } from '../support/isolation.js';
import { spawnCli } from '../support/run-cli.js';
import { dropPrefix, jobsDir, randomKey, serviceEnv } from '../support/service.js';

/** A port some other program holds, as an operator's clash would look. */
async function takenPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  const { port } = await listen(server, 0, '0.0.0.0');
  return { port, server };
}

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
    closers.push(
      () => db.close(),
      () => redis.disconnect(),
    );
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

  it('asks extra routes (the dashboard) first and lists them in the 404 answer', async () => {
    const routes = {
      paths: ['/extra'],
      handle: async (_req: unknown, res: ServerResponse, url: URL) => {
        if (url.pathname !== '/extra') return false;
        res.writeHead(200, { 'content-type': 'text/plain' }).end('extra');
        return true;
      },
    };
    const server = await startHttpServer({ port: 0, host: '127.0.0.1', registry: new Registry(), checks: {}, routes });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    expect(await (await fetch(`${base}/extra`)).text()).toBe('extra');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const missing = await fetch(`${base}/nope`);
    expect(await missing.json()).toEqual({ error: 'not found', routes: ['/healthz', '/readyz', '/metrics', '/extra'] });
  });

  it('a taken port is refused naming HTTP_PORT', async () => {
    const { port, server } = await takenPort();
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const started = startHttpServer({ port, registry: new Registry(), checks: {} });
    await expect(started).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(started).rejects.toThrow(`HTTP_PORT ${port} is already in use (EADDRINUSE): choose another port`);
  });

  it('start on a taken HTTP_PORT exits 1 with that message and no stack trace', async () => {
    const { port, server } = await takenPort();
    const db = await createTestDatabase();
    const jobs = jobsDir();
    const prefix = uniquePrefix();
    closers.push(
      () => new Promise<void>((resolve) => server.close(() => resolve())),
      () => db.drop(),
      () => jobs.remove(),
      () => dropPrefix(prefix),
    );
    jobs.write('earthquakes:\n  - name: any\n    every: 1h\n');
    const env = serviceEnv({
      databaseUrl: db.url,
      prefix,
      gatewayUrl: 'http://127.0.0.1:9',
      key: randomKey(),
      extra: { HTTP_PORT: String(port) },
    });
    const p = spawnCli(['start', '--config', jobs.path], env);
    expect(await p.exited).toEqual({ code: 1, signal: null });
    expect(p.stderr()).toContain(`error: HTTP_PORT ${port} is already in use (EADDRINUSE): choose another port\n`);
    expect(p.stderr()).not.toMatch(/^\s+at /m);
    expect(p.stderr()).not.toContain('"stack"');
  });
});
