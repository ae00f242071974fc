/** `start`: what it takes; the service is in actions/start.ts, loaded only when it runs. */
import { Command } from 'commander';
import { allowInsecureHttpOption, configOption } from '../flags.js';

export function startCommand(): Command {
  return new Command('start')
    .description(
      'run the service: workers, job schedulers kept in step with the jobs file, ' +
        '/healthz /readyz /metrics on HTTP_PORT; ' +
        'SIGTERM/SIGINT finish in-flight jobs (within SHUTDOWN_DEADLINE_MS) and exit 0',
    )
    .addOption(configOption())
    .addOption(allowInsecureHttpOption())
    .action(async (opts: { config: string; allowInsecureHttp?: boolean }) =>
      (await import('../actions/start.js')).runStart(opts),
    );
}
