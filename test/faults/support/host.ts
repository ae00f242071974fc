import { execFile } from 'node:child_process';

export { freePort } from '../../support/ports.js';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never throws on a non-zero exit, so callers can say what failed. */
export function run(file: string, args: string[], timeoutMs = 60_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

export async function runOrThrow(file: string, args: string[], timeoutMs?: number): Promise<string> {
  const r = await run(file, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns something truthy; null when `timeoutMs` passes first. */
export async function pollUntil<T>(
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  everyMs = 100,
): Promise<T | null> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > until) return null;
    await sleep(everyMs);
  }
}

/** True while a process with this pid exists (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs at most `n` of the given tasks at a time; a finished task hands its slot to the next one. */
export function limit(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active < n) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}
