/** Throwaway Redis servers of a test's own, on free loopback ports, so they can be killed or demoted. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A Redis that keeps nothing on disk, on `port`. */
export function runRedis(port: number): { process: ChildProcess; stop(): Promise<void> } {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
