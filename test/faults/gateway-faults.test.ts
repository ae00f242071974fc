/**
 * Fault scenario: gateway faults of every kind the emulator has, at 15% and at 40% of the
 * calls, plus one call that hangs beyond GATEWAY_TIMEOUT_MS, newest-first and random order, over
 * several seeds. One `backfill earthquakes --wait --inline` must complete each, with no re-run.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, type EmulatorCall, type EventOrder, type FaultRule } from '@gateway-ingest/emulator';
import { limit } from './support/host.js';
import { openScenario, suiteFixture } from './support/scenario.js';
import { verdict } from './support/verdict.js';
import { expectReturns0 } from './support/waiting.js';

const RATES = [0.15, 0.4];
const ORDERS: EventOrder[] = ['newest', 'random'];
const SEEDS = [11, 23];
const TIMEOUT_MS = 1_500;
const RUN_DEADLINE_MS = 120_000;
/** Runs mostly wait (timeouts, backoff, Retry-After), so four share the two cores without crowding the 1.5 s timeout. */
const AT_ONCE = 4;

/**
 * Each kind gets the same chance, so that one of them hits with probability `rate`: the emulator
 * rolls the rules in turn and the first hit wins.
 */
function everyKindAt(rate: number): FaultRule[] {
  const each = 1 - (1 - rate) ** (1 / FAULT_KINDS.length);
  return FAULT_KINDS.map((kind) => ({ kind, probability: each }));
}

/** How often each kind hit, so that a run that never played one is visible. */
function faultsPlayed(calls: EmulatorCall[]): string {
  return FAULT_KINDS.map((kind) => `${kind} ${calls.filter((c) => c.fault === kind).length}`).join(', ');
}

describe('scenario 1: gateway faults, one inline backfill completes each run', () => {
  const fixture = suiteFixture();

  const runs = RATES.flatMap((rate) => ORDERS.flatMap((order) => SEEDS.map((seed) => ({ rate, order, seed }))));
  const slot = limit(AT_ONCE);
  for (const { rate, order, seed } of runs) {
    it.concurrent(`${rate * 100}% faults, ${order} order, seed ${seed}, one hung call`, () =>
      slot(() => faultRun(rate, order, seed)),
    );
  }

  async function faultRun(rate: number, order: EventOrder, seed: number): Promise<void> {
    // The hung call is an early one, so that it lands mid-window whatever the seed does to the rest.
    const hold = 3 + (seed % 5);
    const s = await openScenario({
      name: `faults-${rate * 100}pct-${order}-seed${seed}`,
      services: fixture.services,
      order,
      seed,
      faults: everyKindAt(rate),
      hold: [hold],
      env: { GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
    const problems: string[] = [];
    try {
      const inline = s.backfill('backfill-inline', ['--wait', '--inline']);
      await expectReturns0(s, inline, 'backfill --wait --inline', RUN_DEADLINE_MS, problems);
      if (!s.proxy.calls.some((c) => c.held))
        problems.push(`harness: request ${hold} was never held (only ${s.proxy.calls.length} requests)`);
      const v = await verdict(s, fixture.catalog, { disruptions: [], problems });
      process.stdout.write(`[faults] ${s.name}: faults played ${faultsPlayed(s.emulator.calls)}\n`);
      expect(v.problems).toEqual([]);
    } finally {
      await s.finish();
    }
  }
});
