/**
 * The last guarantee that a stop signal ends the process: every close is bounded on its own, but
 * should one still hang (a silent server, a library waiting on it), the process exits this long
 * after the shutdown deadline. By then no call is in flight: calls still running at the deadline
 * were cut off, and their audit rows, written before the request, stay billed unknown.
 */
export const SHUTDOWN_SLACK_MS = 4_000;

export function armShutdownDeadline(deadlineMs: number, exitCode: number): void {
  setTimeout(() => process.exit(exitCode), deadlineMs + SHUTDOWN_SLACK_MS).unref();
}
