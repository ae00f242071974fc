/**
 * Fault scenario: `kill -9` of the worker process at five random moments of a backfill
 * (`backfill --wait` in one process, `worker` in another), a new worker started after each kill.
 * The waiting backfill must return 0 by itself with everything stored; a billed call may be paid
 * again only when the answer of its earlier copy died uncommitted with a killed worker. That is one
 * per call in flight at the kill, not one per kill: windows run side by side (and a window may have
 * several calls out at once), so a single kill can cost several.
 */
import { describe, expect, it } from 'vitest';
import { createRng, type Rng } from '@gateway-ingest/emulator';
import type { CliProcess } from '../support/run-cli.js';
import type { Disruption } from './support/disruptions.js';
import { sleep } from './support/host.js';
import { openScenario, type Scenario, suiteFixture } from './support/scenario.js';
import { verdict } from './support/verdict.js';
import { callsReach, exited, expectReturns0, stopWorker } from './support/waiting.js';

const KILLS = 5;
const SEED = 20_251_110;
const LATENCY_MS = 40;
/** The backfill makes about 50 calls without kills: the kills land at random calls among the first 45. */
const FIRST_KILL_AT = 2;
const LAST_KILL_AT = 45;
/** A new worker that makes no call for this long after a kill has not taken the work over. */
const TAKEOVER_DEADLINE_MS = 45_000;
const FINAL_DEADLINE_MS = 90_000;

interface Kills {
  /** Wall-clock time of each kill. */
  at: number[];
  /**
   * From each kill signal to the killed process's exit: SIGKILL is delivered asynchronously, and a
   * worker may still send a call it had begun in between (its answer is lost like any other).
   */
  spans: Disruption[];
  worker: CliProcess;
}

/** Five distinct gateway-call counts, spread over the whole backfill, in order. */
function killMoments(rng: Rng): number[] {
  const picked = new Set<number>();
  while (picked.size < KILLS) picked.add(FIRST_KILL_AT + Math.floor(rng() * (LAST_KILL_AT - FIRST_KILL_AT + 1)));
  return [...picked].sort((a, b) => a - b);
}

/**
 * Kills the current worker once the gateway has seen the next moment's count of calls (and at
 * least one call since that worker started, so that no kill is spent on a worker still booting),
 * at a random instant within a call.
 */
async function killAtRandomMoments(s: Scenario, waiter: CliProcess, rng: Rng, problems: string[]): Promise<Kills> {
  const moments = killMoments(rng);
  s.note(`kills planned at gateway calls ${moments.join(', ')}`);
  let worker = s.worker('worker-1');
  const at: number[] = [];
  const spans: Disruption[] = [];
  for (const [i, moment] of moments.entries()) {
    const target = Math.max(moment, s.emulator.calls.length + 1);
    if (!(await callsReach(s, target, TAKEOVER_DEADLINE_MS, () => exited(waiter)))) {
      const why = exited(waiter)
        ? 'the backfill returned first (harness: kills too late)'
        : `the gateway saw no call ${target} within ${TAKEOVER_DEADLINE_MS / 1000} s`;
      problems.push(`kill ${i + 1} never happened: ${why}`);
      return { at, spans, worker };
    }
    // Anywhere from just after an answer (before its commit) to mid-way through the next call.
    await sleep(Math.floor(rng() * LATENCY_MS * 1.5));
    worker.child.kill('SIGKILL');
    at.push(Date.now());
    s.note(`worker-${i + 1}: kill -9 at gateway call ${s.emulator.calls.length}`);
    await worker.exited;
    spans.push({ kind: 'kill', from: at.at(-1)!, to: Date.now() });
    worker = s.worker(`worker-${i + 2}`);
  }
  return { at, spans, worker };
}

/** Seconds from each kill to the next request the gateway received: how long the work lay orphaned. */
function takeovers(s: Scenario, kills: number[]): string {
  const arrivals = s.proxy.calls.map((c) => c.arrivedAt);
  return kills.map((k) => `${(((arrivals.find((a) => a > k) ?? Number.NaN) - k) / 1000).toFixed(1)} s`).join(', ');
}

describe('scenario 2: kill -9 of the worker at five random moments', () => {
  const fixture = suiteFixture();

  it('a new worker takes over after each kill; the waiting backfill returns 0 by itself', async () => {
    const s = await openScenario({
      name: 'kill-9-worker-5x',
      services: fixture.services,
      latencyMs: LATENCY_MS,
      seed: SEED,
    });
    const problems: string[] = [];
    try {
      const waiter = s.backfill('backfill-wait', ['--wait']);
      const kills = await killAtRandomMoments(s, waiter, createRng(SEED), problems);
      await expectReturns0(s, waiter, 'backfill --wait', FINAL_DEADLINE_MS, problems);
      await stopWorker(s, kills.worker, `worker-${kills.at.length + 1}`, 10_000);
      const taken = takeovers(s, kills.at);
      s.note(`work taken over after each kill in: ${taken}`);
      process.stdout.write(
        `[faults] ${s.name}: ${kills.at.length} kills (seed ${SEED}); first gateway call after each kill ${taken} later\n`,
      );
      const v = await verdict(s, fixture.catalog, {
        disruptions: kills.spans,
        problems,
      });
      expect(v.problems).toEqual([]);
    } finally {
      await s.finish();
    }
  });
});
