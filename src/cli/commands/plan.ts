/**
 * `plan`: what it takes; planning is in actions/plan.ts, loaded only when it runs (so that `--help`
 * loads neither the database driver nor the queue).
 */
import { Command, Option } from 'commander';
import type { EarthquakeRangeFlags, IndicatorRangeFlags } from '../backfill-request.js';
import type { PlanFlags } from '../actions/plan.js';
import { configOption, earthquakeRangeOptions, indicatorRangeOptions, planOptions } from '../flags.js';

const actions = () => import('../actions/plan.js');

export function planCommand(): Command {
  const earthquakes = planOptions(
    earthquakeRangeOptions(
      new Command('earthquakes').description('plan an earthquake backfill (the flags of `backfill earthquakes`)'),
    ),
  ).action(async (f: EarthquakeRangeFlags & PlanFlags) => (await actions()).planEarthquakes(f));
  const indicators = planOptions(
    indicatorRangeOptions(
      new Command('indicators').description('plan an indicator backfill (the flags of `backfill indicators`)'),
    ),
  ).action(async (f: IndicatorRangeFlags & PlanFlags) => (await actions()).planIndicators(f));
  const c = new Command('plan')
    .description(
      'what a backfill would fetch and cost, without calling the gateway or enqueueing: ' +
        '`plan earthquakes`, `plan indicators`, or `plan --stream NAME`',
    )
    .addOption(new Option('--stream <name>', 'plan the backfill of a stream declared in jobs.yaml'))
    .addOption(configOption())
    .enablePositionalOptions();
  planOptions(c);
  c.addCommand(earthquakes);
  c.addCommand(indicators);
  return c.action(async (f: PlanFlags & { stream?: string; config: string }) => (await actions()).planStream(f));
}
