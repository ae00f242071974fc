/**
 * `backfill` and its subcommands: what they take. The work is in actions/backfill.ts and
 * actions/backfill-control.ts, loaded only when a command runs.
 */
import { Command, Option } from 'commander';
import type { RunFlags } from '../actions/backfill.js';
import type { ResumeFlags } from '../actions/backfill-control.js';
import type { EarthquakeRangeFlags, IndicatorRangeFlags } from '../backfill-request.js';
import {
  addPlanOptions,
  allowInsecureHttpOption,
  configOption,
  earthquakeRangeOptions,
  indicatorRangeOptions,
  maxBilledCallsOption,
} from '../flags.js';

const run = () => import('../actions/backfill.js');
const control = () => import('../actions/backfill-control.js');

function addRunOptions(c: Command): Command {
  return addPlanOptions(c)
    .option('--wait', 'wait until the enqueued jobs finish (progress on stderr); exit 0 only if all succeeded')
    .option(
      '--inline',
      'also run workers in this process, so this command alone does the whole backfill (implies --wait)',
    )
    .option('--refresh', 're-read partitions already ingested for the same filters')
    .addOption(maxBilledCallsOption())
    .addOption(allowInsecureHttpOption());
}

function earthquakesCommand(): Command {
  const c = new Command('earthquakes').description('backfill earthquake events in windows of at most 31 days');
  return addRunOptions(earthquakeRangeOptions(c)).action(async (f: EarthquakeRangeFlags & RunFlags) =>
    (await run()).backfillEarthquakes(f),
  );
}

function indicatorsCommand(): Command {
  const c = new Command('indicators').description(
    'backfill yearly indicator values, one job per (indicator, country, chunk of at most 70 years)',
  );
  return addRunOptions(indicatorRangeOptions(c)).action(async (f: IndicatorRangeFlags & RunFlags) =>
    (await run()).backfillIndicators(f),
  );
}

const configFlag = () => configOption({ purpose: 'jobs file naming the streams a target may name', optional: true });

function listCommand(): Command {
  return new Command('list')
    .description(
      'backfills, newest first: id, created, what they cover, control (active, paused, paused by budget, cancelled), ' +
        'partitions done of total, billed calls, budget used of cap',
    )
    .option('--json', 'machine-readable output')
    .option('--limit <n>', 'how many backfills to list', '20')
    .action(async (f: { json?: boolean; limit: string }) => (await control()).listAction(f));
}

function controlCommand(command: 'pause' | 'cancel'): Command {
  const what =
    command === 'pause'
      ? 'pause: running jobs stop before their next call, queued ones are taken off the queues (resume puts them back)'
      : 'cancel for good: queued jobs are taken off, running ones finish their current call and stop; ' +
        'what was written stays';
  return new Command(command)
    .description(`${what}. TARGET: a backfill id, or a stream name or key (its most recent backfill)`)
    .argument('<target>', 'backfill id, stream name (jobs.yaml) or stream key')
    .addOption(configFlag())
    .action(async (target: string, f: { config?: string }) => (await control()).controlAction(command, target, f));
}

function resumeCommand(): Command {
  return new Command('resume')
    .description(
      'resume a paused backfill (or one paused by its budget, with a larger --max-billed-calls); ' +
        'TARGET: a backfill id, or a stream name or key',
    )
    .argument('<target>', 'backfill id, stream name (jobs.yaml) or stream key')
    .addOption(maxBilledCallsOption())
    .option('--wait', 'then wait until it is done or held again; exit 0 only if every partition is done')
    .option('--inline', 'also run workers in this process (implies --wait)')
    .addOption(configFlag())
    .addOption(allowInsecureHttpOption())
    .action(async (target: string, f: ResumeFlags) => (await control()).resumeAction(target, f));
}

function budgetCommand(): Command {
  return new Command('budget')
    .description(
      'set the cap on billed calls of a backfill (`none` lifts it); ' +
        'a backfill paused by its budget goes on at once when it is raised',
    )
    .argument('<target>', 'backfill id, stream name (jobs.yaml) or stream key')
    .argument('<n>', 'billed calls, counting those already made, or `none`')
    .option('--wait', 'then wait until it is done or held again; exit 0 only if every partition is done')
    .option('--inline', 'also run workers in this process (implies --wait)')
    .addOption(configFlag())
    .addOption(allowInsecureHttpOption())
    .action(async (target: string, n: string, f: ResumeFlags) => (await control()).budgetAction(target, n, f));
}

export function backfillCommand(): Command {
  const c = new Command('backfill')
    .description(
      'plan and enqueue history: `backfill earthquakes`, `backfill indicators`, ' +
        'or `backfill --stream NAME` from jobs.yaml',
    )
    .addOption(
      new Option('--stream <name>', 'backfill a stream declared in jobs.yaml from its backfill_from / from_year'),
    )
    .addOption(configOption())
    .enablePositionalOptions();
  addRunOptions(c);
  c.addCommand(earthquakesCommand());
  c.addCommand(indicatorsCommand());
  for (const sub of [
    listCommand(),
    controlCommand('pause'),
    resumeCommand(),
    controlCommand('cancel'),
    budgetCommand(),
  ])
    c.addCommand(sub);
  return c.action(async (f: RunFlags & { stream?: string; config: string }) => (await run()).backfillStream(f));
}
