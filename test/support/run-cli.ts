import { spawn, type ChildProcess } from 'node:child_process';
import { packageRoot } from '../../src/paths.js';

export type LogLine = Record<string, unknown> & { msg?: string };

export interface CliProcess {
  child: ChildProcess;
  /** Parsed pino lines from stderr, oldest first. */
  logs: LogLine[];
  stderr(): string;
  stdout(): string;
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs the CLI as an operator does, through `bin/gateway-ingest.js` on dist/ (kept up to date with the
 * sources by the global setup, test/support/build.ts). `env` is added to the test's environment.
 */
export function spawnCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ['bin/gateway-ingest.js', ...args], {
    cwd: packageRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let partial = '';
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // Not a log line (an error message): kept in stderr() only.
      }
    }
    for (const w of waiters) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const waitForLog = (match: (line: LogLine) => boolean, timeoutMs = 20_000) =>
    new Promise<LogLine>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        waiters.delete(check);
        outcome();
      };
      const check = () => {
        const found = logs.find(match);
        if (found) finish(() => resolve(found));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no matching log line within ${timeoutMs} ms; stderr:\n${err}`))),
        timeoutMs,
      );
      waiters.add(check);
      void exited.then(({ code }) => {
        check();
        finish(() => reject(new Error(`exited (${code}) without a matching log line; stderr:\n${err}`)));
      });
      check();
    });
  return { child, logs, stderr: () => err, stdout: () => out, waitForLog, exited };
}

/** Kills a CLI process left running by a failed test, so the run does not hang on it. */
export async function ensureStopped(p: CliProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGKILL');
  await p.exited;
}
