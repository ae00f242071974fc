/** `migrate`: what it takes; the work is in actions/migrate.ts, loaded only when it runs. */
import { Command } from 'commander';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('create the database if missing and apply the committed migrations (idempotent)')
    .action(async () => (await import('../actions/migrate.js')).runMigrate());
}
