import type { CliProcess } from '../../support/run-cli.js';
import { pollUntil } from './host.js';
import type { Scenario } from './scenario.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Seconds from the call to the exit. */
  afterS: number;
}

/** The process's exit, or null if it is still running after `timeoutMs`. */
export async function exitWithin(p: CliProcess, timeoutMs: number): Promise<Exit | null> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
  const exit = await Promise.race([p.exited, timeout]);
  clearTimeout(timer);
  return exit === null ? null : { ...exit, afterS: (Date.now() - t0) / 1000 };
}

/** The last lines a process printed, for a problem report. */
export function tail(p: CliProcess, lines = 4): string {
  const out = `${p.stdout()}${p.stderr()}`.trim().split('\n');
  return out.slice(-lines).join(' | ').slice(0, 1200);
}

/** Where the work stands when something hangs: each partition and the BullMQ queue. */
export async function whereItStands(s: Scenario): Promise<string> {
  const parts = await s.partitions().catch((e: unknown) => `partitions unreadable: ${(e as Error).message}`);
  const shown =
    typeof parts === 'string'
      ? parts
      : parts
          .map(
            (p) => `${p.partitionKey} ${p.state}${p.lastErrorKind ? ` [${p.lastErrorKind}] ${p.lastError ?? ''}` : ''}`,
          )
          .join(', ');
  return `partitions: ${shown}; ${await s.queueState()}`;
}

/**
 * Waits for a backfill command to return 0 by itself; any other end (a hang, a crash, exit 1) is a
 * problem described with where the work stood.
 */
export async function expectReturns0(
  s: Scenario,
  p: CliProcess,
  label: string,
  timeoutMs: number,
  problems: string[],
): Promise<Exit | null> {
  const exit = await exitWithin(p, timeoutMs);
  if (exit === null) {
    problems.push(
      `${label} did not return within ${timeoutMs / 1000} s (${s.elapsed()}); ${await whereItStands(s)}; last output: ${tail(p)}`,
    );
    s.note(`${label}: still running at the deadline, killed`);
    p.child.kill('SIGKILL');
    await p.exited;
  } else if (exit.code !== 0) {
    problems.push(
      `${label} exited ${exit.signal ?? `code ${exit.code}`} at ${s.elapsed()}: ${tail(p)}; ${await whereItStands(s)}`,
    );
  }
  return exit;
}

/** SIGTERM, then SIGKILL if it outlives `deadlineMs`: the end of every worker a scenario started. */
export async function stopWorker(s: Scenario, p: CliProcess, label: string, deadlineMs: number): Promise<Exit | null> {
  if (exited(p)) return exitWithin(p, 0);
  p.child.kill('SIGTERM');
  s.note(`${label}: SIGTERM`);
  const exit = await exitWithin(p, deadlineMs);
  if (exit === null) {
    s.note(`${label}: still running ${deadlineMs} ms after SIGTERM, killed`);
    p.child.kill('SIGKILL');
    await p.exited;
  }
  return exit;
}

/** Until the gateway has seen `n` calls in all; false if `timeoutMs` passes or `unless` turns true first. */
export async function callsReach(
  s: Scenario,
  n: number,
  timeoutMs: number,
  unless: () => boolean = () => false,
): Promise<boolean> {
  const reached = await pollUntil(
    async () => (s.emulator.calls.length >= n ? 'reached' : unless() ? 'stopped' : null),
    timeoutMs,
    20,
  );
  return reached === 'reached';
}

export function exited(p: CliProcess): boolean {
  return p.child.exitCode !== null || p.child.signalCode !== null;
}

/** How a finished process ended, for a problem report. */
export function exitOf(p: CliProcess): string {
  return p.child.signalCode ?? `code ${p.child.exitCode}`;
}

/**
 * The scenario's one worker must have lived through `what` (an outage, a restart): a problem if it
 * exited by itself; then it is stopped like any other, before the verdict is taken.
 */
export async function stopSurvivor(s: Scenario, worker: CliProcess, what: string, problems: string[]): Promise<void> {
  if (exited(worker)) problems.push(`worker-1 did not survive ${what}: it exited ${exitOf(worker)}`);
  await stopWorker(s, worker, 'worker-1', 10_000);
}
