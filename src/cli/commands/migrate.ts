import { Command } from 'commander';
import { redactUrl } from '../../config/env.js';
import { runMigrations } from '../../db/migrate.js';
import { loadEnv } from '../runtime.js';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('create the database if missing and apply the committed migrations (idempotent)')
    .action(async () => {
      const env = loadEnv();
      const { created } = await runMigrations(env.databaseUrl);
      process.stdout.write(`${created ? 'created database and ' : ''}migrated ${redactUrl(env.databaseUrl)}\n`);
    });
}
