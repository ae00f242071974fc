/** `status`: what it takes; the report is in actions/status.ts, loaded only when it runs. */
import { Command } from 'commander';
import { configOption } from '../flags.js';

export function statusCommand(): Command {
  return new Command('status')
    .description(
      'per stream: schedule, last success, freshness, coverage and gaps, billed calls and units, failed windows; ' +
        'exits 1 when any window has failed',
    )
    .option('--json', 'machine-readable output')
    .addOption(configOption({ purpose: 'jobs file to join schedules and backfill ranges from', optional: true }))
    .action(async (f: { json?: boolean; config?: string }) => (await import('../actions/status.js')).runStatus(f));
}
