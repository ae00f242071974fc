/** `migrate`: the database created if missing, the committed migrations applied. */
import { redactUrl } from '../../config/env.js';
import { runMigrations } from '../../db/migrate.js';
import { loadEnv } from '../runtime.js';

export async function runMigrate(): Promise<void> {
  const env = loadEnv();
  const { created } = await runMigrations(env.databaseUrl);
  process.stdout.write(`${created ? 'created database and ' : ''}migrated ${redactUrl(env.databaseUrl)}\n`);
}
