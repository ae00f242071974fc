/** Throwaway Redis servers of a test's own, on free loopback ports, so they can be killed or demoted. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export { freePort } from './ports.js';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

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
