import { spawn, type ChildProcess } from 'node:child_process';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Killed by its time bound, not ended by the test or by itself. */
  timedOut: boolean;
}

export interface CliRun {
  label: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** JSON log lines on stderr whose `msg` is `msg`. */
  logCount(msg: string): number;
  exited: Promise<Exit>;
  /** Sends `signal` if it still runs, and waits for its end. */
  stop(signal: NodeJS.Signals): Promise<Exit>;
}

/**
 * `node bin/gateway-ingest.js` of the installation in `cwd`, as an operator runs it, with `env` added
 * to the test's environment. Killed after `timeoutMs` whatever it does, so that no run can hang the suite.
 */
export function runCli(
  label: string,
  cwd: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): CliRun {
  const child = spawn(process.execPath, ['bin/gateway-ingest.js', ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut });
    }),
  );
  const logCount = (msg: string) =>
    err.split('\n').filter((line) => {
      try {
        return (JSON.parse(line) as { msg?: unknown }).msg === msg;
      } catch {
        return false;
      }
    }).length;
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return { label, child, stdout: () => out, stderr: () => err, logCount, exited, stop };
}

/** What a finished run printed, for assertion messages. */
export function transcript(run: CliRun, exit: Exit): string {
  const how = exit.timedOut ? 'timed out' : exit.signal ? `killed by ${exit.signal}` : `exited ${exit.code}`;
  const stderr = run.stderr().slice(-4000);
  return `${run.label} ${how}\n--- stdout ---\n${run.stdout()}\n--- stderr (last 4000 chars) ---\n${stderr}`;
}

/** Polls `probe` until it returns something truthy; throws, naming `what`, when `timeoutMs` passes first. */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      lastError = String(e);
    }
    if (Date.now() > until) {
      const last = lastError ? ` (last error: ${lastError})` : '';
      throw new Error(`not within ${timeoutMs} ms: ${what}${last}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
