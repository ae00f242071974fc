/** `worker`: what it takes; the work is in actions/worker.ts, loaded only when it runs. */
import { Command } from 'commander';
import { allowInsecureHttpOption } from '../flags.js';

export function workerCommand(): Command {
  return new Command('worker')
    .description(
      'run queue workers until SIGINT/SIGTERM, then finish in-flight jobs (within SHUTDOWN_DEADLINE_MS) and exit 0',
    )
    .addOption(allowInsecureHttpOption())
    .action(async (opts: { allowInsecureHttp?: boolean }) => (await import('../actions/worker.js')).runWorker(opts));
}
