/**
 * Fault scenario: SIGTERM to the worker mid-backfill while every gateway answer takes 250 ms.
 * The worker must exit 0 within SHUTDOWN_DEADLINE_MS, starting no new call after the signal, and a
 * new worker must complete the backfill. Nothing is killed, so nothing may be paid twice.
 */
import { and, gt, lte } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { gatewayExecutions } from '../../src/db/schema.js';
import { openScenario, type Scenario, suiteFixture } from './support/scenario.js';
import { verdict } from './support/verdict.js';
import type { CliProcess } from '../support/run-cli.js';
import { callsReach, exitWithin, exited, expectReturns0, stopWorker } from './support/waiting.js';

const LATENCY_MS = 250;
const SHUTDOWN_DEADLINE_MS = 3_000;
/** Closing the Redis and PostgreSQL connections and leaving the process, after the deadline. */
const EXIT_SLACK_MS = 1_000;
const DEADLINE_MS = 120_000;

/**
 * When the worker began to stop, by its own clock: its log line naming the signal. The signal's
 * delivery can lag on a loaded machine, so calls are judged against this moment, not the kill().
 */
function stoppingAt(worker: CliProcess, signalledAt: number): number {
  const line = worker.logs.find((l) => typeof l.signal === 'string');
  return typeof line?.time === 'number' ? line.time : signalledAt;
}

/** Calls the worker started (its write-ahead audit row, stamped just before the request) after it began to stop. */
async function callsStartedAfter(s: Scenario, from: number, to: number): Promise<string[]> {
  const rows = await s.db.db
    .select()
    .from(gatewayExecutions)
    .where(and(gt(gatewayExecutions.startedAt, new Date(from)), lte(gatewayExecutions.startedAt, new Date(to))));
  return rows.map((r) => `row ${r.id} started ${r.startedAt.getTime() - from} ms after`);
}

/** Sends SIGTERM and checks the exit: code 0, in time, no call started once the worker began to stop. */
async function terminate(s: Scenario, worker: CliProcess, problems: string[]): Promise<void> {
  const signalledAt = Date.now();
  worker.child.kill('SIGTERM');
  s.note(`worker-1: SIGTERM with ${s.emulator.calls.length} calls answered`);
  const exit = await exitWithin(worker, SHUTDOWN_DEADLINE_MS + 30_000);
  const limitS = (SHUTDOWN_DEADLINE_MS + EXIT_SLACK_MS) / 1000;
  if (exit === null) problems.push(`worker-1 still running ${SHUTDOWN_DEADLINE_MS / 1000 + 30} s after SIGTERM`);
  else if (exit.code !== 0)
    problems.push(`worker-1 exited ${exit.signal ?? `code ${exit.code}`} after SIGTERM (want 0)`);
  else if (exit.afterS > limitS)
    problems.push(
      `worker-1 took ${exit.afterS.toFixed(1)} s to exit after SIGTERM (SHUTDOWN_DEADLINE_MS ${SHUTDOWN_DEADLINE_MS} ms, at most ${limitS} s with connection close)`,
    );
  const stopping = stoppingAt(worker, signalledAt);
  s.note(`worker-1: began stopping ${stopping - signalledAt} ms after the signal was sent`);
  const started = await callsStartedAfter(s, stopping, Date.now());
  if (started.length > 0)
    problems.push(
      `worker-1 started ${started.length} gateway calls after it began stopping on SIGTERM (${started.join(', ')})`,
    );
}

describe('scenario 6: SIGTERM mid-backfill under 250 ms gateway latency', () => {
  const fixture = suiteFixture();

  it('the worker exits 0 within SHUTDOWN_DEADLINE_MS; a new worker completes the backfill', async () => {
    const s = await openScenario({
      name: 'sigterm-250ms',
      services: fixture.services,
      latencyMs: LATENCY_MS,
      env: { SHUTDOWN_DEADLINE_MS: String(SHUTDOWN_DEADLINE_MS) },
    });
    const problems: string[] = [];
    try {
      const waiter = s.backfill('backfill-wait', ['--wait']);
      const first = s.worker('worker-1');
      if (!(await callsReach(s, 6, 60_000, () => exited(waiter))))
        problems.push('harness: the backfill ended before 6 calls');
      await terminate(s, first, problems);
      const second = s.worker('worker-2');
      await expectReturns0(s, waiter, 'backfill --wait', DEADLINE_MS, problems);
      await stopWorker(s, second, 'worker-2', 10_000);
      const v = await verdict(s, fixture.catalog, { disruptions: [], problems });
      expect(v.problems).toEqual([]);
    } finally {
      await s.finish();
    }
  });
});
