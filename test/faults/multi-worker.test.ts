/**
 * Fault scenario: two and three worker processes on the same queues. No duplicate rows, and
 * no window done twice: a window taken by two workers at once would send the same paid requests
 * twice, which the repeat count catches.
 */
import { describe, expect, it } from 'vitest';
import { openScenario, suiteFixture } from './support/scenario.js';
import { verdict } from './support/verdict.js';
import { expectReturns0, stopWorker } from './support/waiting.js';

const LATENCY_MS = 30;
const DEADLINE_MS = 90_000;

describe('scenario 5: several worker processes on the same queues', () => {
  const fixture = suiteFixture();

  it.each([2, 3])('%i workers: every window done once, no duplicate rows', async (n) => {
    const s = await openScenario({ name: `workers-${n}`, services: fixture.services, latencyMs: LATENCY_MS, seed: n });
    const problems: string[] = [];
    try {
      // Workers first, so that all of them are polling when the jobs arrive.
      const workers = Array.from({ length: n }, (_, i) => s.worker(`worker-${i + 1}`));
      const waiter = s.backfill('backfill-wait', ['--wait']);
      await expectReturns0(s, waiter, 'backfill --wait', DEADLINE_MS, problems);
      await Promise.all(workers.map((w, i) => stopWorker(s, w, `worker-${i + 1}`, 10_000)));
      const v = await verdict(s, fixture.catalog, { disruptions: [], problems });
      expect(v.problems).toEqual([]);
    } finally {
      await s.finish();
    }
  });
});
