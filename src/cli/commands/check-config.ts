/** `check-config`: what it takes; the checks are in actions/check-config.ts, loaded only when it runs. */
import { Command } from 'commander';
import { DENSITY_CONNECT_TIMEOUT_MS } from '../../db/queries/density-limits.js';
import type { CheckConfigIo } from '../actions/check-config.js';
import { configOption } from '../flags.js';

export function checkConfigCommand(io: CheckConfigIo = {}): Command {
  return new Command('check-config')
    .description(
      'Validate the jobs file (every rule of the gateway spec is checked) and print the streams it declares, ' +
        'with each stream\'s projected billed calls per day. Every problem is listed as "file:line  path: reason"; ' +
        'an invalid file exits with code 2.',
    )
    .addOption(configOption())
    .addHelpText(
      'after',
      '\nEarthquake projections use the density of the events already stored (DATABASE_URL); without a ' +
        `database answering within ${DENSITY_CONNECT_TIMEOUT_MS / 1000} s they show runs and windows only.\n` +
        'The format of the jobs file is described in docs/jobs-yaml.md.',
    )
    .action(async (opts: { config: string }) => (await import('../actions/check-config.js')).runCheckConfig(opts, io));
}
