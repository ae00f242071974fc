import { createServer } from 'node:net';

/**
 * Ports for private servers (PostgreSQL, Redis) are drawn below the kernel's ephemeral range
 * (32768 and up on Linux), where the kernel never hands one to a client's connection or to a
 * `listen(0)`: a server stopped for an outage finds its port still free when it starts again. Each
 * vitest worker draws from a range of its own, and never draws a port twice.
 */
const FIRST_PORT = 15_000;
const PORTS_PER_WORKER = 2_000;
const WORKER_RANGES = 8;
const given = new Set<number>();

async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/** A port nobody listens on right now, and no test of this run will be given again, for a private server. */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? 0) % WORKER_RANGES;
  const base = FIRST_PORT + worker * PORTS_PER_WORKER;
  for (let tries = 0; tries < 500; tries++) {
    const port = base + Math.floor(Math.random() * PORTS_PER_WORKER);
    if (given.has(port)) continue;
    given.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${base}..${base + PORTS_PER_WORKER - 1}`);
}
