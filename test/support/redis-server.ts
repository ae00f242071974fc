/** Throwaway Redis servers of a test's own, on free loopback ports, so they can be killed or demoted. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

export { freePort } from './ports.js';

export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/**
 * The command line every test's own `redis-server` starts from: loopback only, on `port`, no
 * snapshots, and (as BullMQ requires) no eviction. `extra` adds to it or overrides it.
 */
export function loopbackRedisArgs(port: number, extra: readonly string[] = []): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--maxmemory-policy', 'noeviction', ...extra];
}

/** A Redis that keeps nothing on disk, on `port`; `extra` adds to its command line (a password). */
export function runRedis(
  port: number,
  extra: readonly string[] = [],
): { process: ChildProcess; stop(): Promise<void> } {
  const child = spawn('redis-server', loopbackRedisArgs(port, ['--appendonly', 'no', ...extra]), { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
