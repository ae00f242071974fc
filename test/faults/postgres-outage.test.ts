/**
 * Fault scenario: PostgreSQL stopped for 10 s and for 150 s mid-backfill, then started
 * again. The worker must recover by itself (no restart, no re-run), and the audit must still equal
 * the gateway's log. The two outages run side by side, each on servers of its own, since the long
 * one is mostly waiting.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadUsgsFile } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { MONTH_FILE } from './support/data.js';
import type { Disruption } from './support/disruptions.js';
import { sleep } from './support/host.js';
import { openScenario, startServices, type Scenario } from './support/scenario.js';
import { verdict } from './support/verdict.js';
import { callsReach, exitOf, exited, expectReturns0, stopWorker, whereItStands } from './support/waiting.js';

const LATENCY_MS = 100;
/** After PostgreSQL is back: time for retries that backed off during the outage to come round, and the rest of the work. */
const RECOVERY_DEADLINE_MS = 90_000;

let catalog: EarthquakeEvent[];

beforeAll(async () => {
  catalog = await loadUsgsFile(MONTH_FILE);
});

/** Stops PostgreSQL mid-backfill for `downMs` and starts it again; returns the outage as a disruption. */
async function outage(s: Scenario, downMs: number): Promise<Disruption> {
  const from = Date.now();
  await s.services.pg.stop();
  s.note(`postgres: stopped after ${s.emulator.calls.length} calls`);
  await sleep(downMs);
  await s.services.pg.start();
  s.note(`postgres: started again after ${downMs / 1000} s`);
  return { kind: 'outage', from, to: Date.now() };
}

async function postgresDown(downMs: number): Promise<void> {
  const services = await startServices();
  const s = await openScenario({ name: `postgres-down-${downMs / 1000}s`, services, latencyMs: LATENCY_MS });
  const problems: string[] = [];
  try {
    const waiter = s.backfill('backfill-wait', ['--wait']);
    const worker = s.worker('worker-1');
    if (!(await callsReach(s, 8, 60_000, () => exited(waiter))))
      problems.push('harness: the backfill ended before 8 calls');
    const down = await outage(s, downMs);
    // The worker alone must finish, whatever became of the waiting command.
    if (!(await s.allDone(RECOVERY_DEADLINE_MS))) {
      problems.push(
        `the worker did not finish within ${RECOVERY_DEADLINE_MS / 1000} s of PostgreSQL coming back (${s.elapsed()}); ${await whereItStands(s)}`,
      );
    }
    if (exited(worker)) problems.push(`worker-1 did not survive the outage: it exited ${exitOf(worker)}`);
    await expectReturns0(s, waiter, 'backfill --wait', 15_000, problems);
    await stopWorker(s, worker, 'worker-1', 10_000);
    const v = await verdict(s, catalog, { disruptions: [down], problems });
    expect(v.problems).toEqual([]);
  } finally {
    await s.finish();
    await services.destroy();
  }
}

describe('scenario 4: PostgreSQL stopped mid-backfill', () => {
  it.concurrent('for 10 s: the worker recovers by itself, the audit equals the gateway log', () =>
    postgresDown(10_000),
  );
  it.concurrent('for 150 s: the worker recovers by itself, the audit equals the gateway log', () =>
    postgresDown(150_000),
  );
});
