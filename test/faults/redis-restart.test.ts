/**
 * Fault scenario: Redis restarted mid-backfill, once with its data kept (append-only file)
 * and once with its data lost (the queue is gone). The worker must recover by itself; with the queue
 * lost, re-running the same backfill command completes the rest without paying again for windows
 * that were finished.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadUsgsFile, type EmulatorCall } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { MONTH_FILE } from './support/data.js';
import { pollUntil } from './support/host.js';
import { openScenario, startServices, type Partition, type Scenario, type Services } from './support/scenario.js';
import { intervalOf } from './support/audit-reconcile.js';
import { verdict } from './support/verdict.js';
import { callsReach, exitWithin, exited, expectReturns0, stopSurvivor } from './support/waiting.js';

/** Slow enough that the long window is still running when the short one is done. */
const LATENCY_MS = 150;
const DOWN_MS = 3_000;
const DEADLINE_MS = 90_000;

let catalog: EarthquakeEvent[];

beforeAll(async () => {
  catalog = await loadUsgsFile(MONTH_FILE);
});

/** A request's time range falls in a window when its midpoint does (queries reach a second past their window). */
function inWindow(call: EmulatorCall, w: Partition): boolean {
  const [from, to] = intervalOf(call.body)
    .split('..')
    .map((t) => Date.parse(t));
  const mid = ((from ?? Number.NaN) + (to ?? Number.NaN)) / 2;
  return (
    w.windowStart !== null && w.windowEnd !== null && mid >= w.windowStart.getTime() && mid <= w.windowEnd.getTime()
  );
}

/** Until one window is done and another is not: the moment that tells "finished" from "in progress". */
async function oneWindowDone(s: Scenario): Promise<boolean> {
  const found = await pollUntil(
    async () => {
      const parts = await s.partitions();
      return parts.some((p) => p.state === 'done') && parts.some((p) => p.state !== 'done');
    },
    DEADLINE_MS,
    50,
  );
  return found !== null;
}

describe('scenario 3: Redis restarted mid-backfill', () => {
  let services: Services;

  beforeEach(async () => {
    services = await startServices();
  });

  afterEach(async () => {
    await services?.destroy();
  });

  it('with its data kept: the worker recovers by itself and the waiting backfill returns 0', async () => {
    const s = await openScenario({ name: 'redis-restart-data-kept', services, latencyMs: LATENCY_MS });
    const problems: string[] = [];
    try {
      const waiter = s.backfill('backfill-wait', ['--wait']);
      const worker = s.worker('worker-1');
      if (!(await callsReach(s, 8, DEADLINE_MS, () => exited(waiter))))
        problems.push('harness: the backfill ended before 8 calls');
      s.note(`redis: stopping (SIGTERM, append-only file kept) after ${s.emulator.calls.length} calls`);
      await services.redis.restart({ keepData: true, downMs: DOWN_MS });
      s.note('redis: started again with its data');
      await expectReturns0(s, waiter, 'backfill --wait', DEADLINE_MS, problems);
      await stopSurvivor(s, worker, 'the Redis restart', problems);
      const v = await verdict(s, catalog, { disruptions: [], problems });
      expect(v.problems).toEqual([]);
    } finally {
      await s.finish();
    }
  });

  it('with its data lost: re-running the backfill completes the rest without paying again for finished windows', async () => {
    const s = await openScenario({ name: 'redis-restart-data-lost', services, latencyMs: LATENCY_MS });
    const problems: string[] = [];
    try {
      const waiter = s.backfill('backfill-wait', ['--wait']);
      const worker = s.worker('worker-1');
      if (!(await oneWindowDone(s))) problems.push('harness: never saw one window done and another not');
      await services.redis.restart({ keepData: false });
      const finished = (await s.partitions()).filter((p) => p.state === 'done');
      s.note(
        `redis: restarted empty (queue lost) after ${s.emulator.calls.length} calls; done then: ${finished.map((p) => p.partitionKey).join(', ')}`,
      );
      const rerunFrom = s.emulator.calls.length;
      const rerun = s.backfill('backfill-rerun', ['--wait']);
      await expectReturns0(s, rerun, 'the re-run backfill --wait', DEADLINE_MS, problems);
      const paidAgain = s.emulator.calls
        .slice(rerunFrom)
        .filter((c) => c.billed && finished.some((w) => inWindow(c, w)));
      if (paidAgain.length > 0)
        problems.push(
          `billed again for windows finished before the restart: ${paidAgain.map((c) => `${c.executionId} ${intervalOf(c.body)}`).join('; ')}`,
        );
      const first = await exitWithin(waiter, 10_000);
      s.note(
        `the first backfill --wait ${first === null ? 'was still waiting 10 s after the re-run returned' : `exited ${first.signal ?? `code ${first.code}`}`}`,
      );
      await stopSurvivor(s, worker, 'the Redis restart', problems);
      const v = await verdict(s, catalog, { disruptions: [], problems });
      expect(v.problems).toEqual([]);
    } finally {
      await s.finish();
    }
  });
});
