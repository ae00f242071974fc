import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { loopbackRedisArgs } from '../../support/redis-server.js';
import { freePort, pollUntil, sleep } from './host.js';

export interface PrivateRedis {
  port: number;
  /** With a database index, as the CLI wants it. */
  url: string;
  start(): Promise<void>;
  /** SIGTERM: Redis flushes its append-only file and exits, so a restart keeps the queues. */
  stop(): Promise<void>;
  /** SIGKILL: whatever the last fsync did not write is gone. */
  kill(): Promise<void>;
  /** Deletes the data directory (stopped server only): the next start is an empty Redis. */
  wipe(): void;
  /** Stops (SIGTERM), stays down for `downMs`, starts again with its data or, with `keepData: false`, empty. */
  restart(o: { keepData: boolean; downMs?: number }): Promise<void>;
  destroy(): Promise<void>;
  log(): string;
}

async function pong(port: number): Promise<boolean> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * A Redis of this test's own on a free port, append-only so that a restart "with its data kept"
 * keeps the queues, and `noeviction` as docs/production.md asks of production.
 */
export async function createRedis(): Promise<PrivateRedis> {
  const root = mkdtempSync(join(tmpdir(), 'gi-faults-redis-'));
  const data = join(root, 'data');
  const port = await freePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  const signal = async (s: NodeJS.Signals) => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(s);
    await exited;
    child = null;
  };
  // A test run cut short (a timeout, ^C) skips afterAll: the server must not outlive it.
  const orphanGuard = () => void child?.kill('SIGKILL');
  const self: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      mkdirSync(data, { recursive: true });
      const args = loopbackRedisArgs(port, ['--appendonly', 'yes', '--dir', data]);
      const started = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      started.stdout?.on('data', (c: Buffer) => (output += c.toString()));
      started.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      exited = new Promise((resolve) => started.on('exit', () => resolve()));
      child = started;
      if (!(await pollUntil(() => pong(port), 15_000)))
        throw new Error(`redis-server on ${port} did not answer:\n${output}`);
    },
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
    wipe() {
      if (child) throw new Error('wipe a stopped Redis only');
      rmSync(data, { recursive: true, force: true });
    },
    async restart(o) {
      await self.stop();
      if (!o.keepData) self.wipe();
      await sleep(o.downMs ?? 0);
      await self.start();
    },
    async destroy() {
      process.off('exit', orphanGuard);
      await signal('SIGKILL');
      rmSync(root, { recursive: true, force: true });
    },
    log: () => output,
  };
  process.once('exit', orphanGuard);
  await self.start();
  return self;
}
