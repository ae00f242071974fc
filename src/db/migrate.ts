import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { migrationsFolder } from '../paths.js';
import { CONNECT_TIMEOUT_MS, openDb, postgresHint } from './connection.js';
import { ServiceUnavailableError } from '../errors.js';

/** Serialises concurrent `migrate` runs (replicas starting together). */
const MIGRATION_LOCK_ID = 7_204_118_001;
/** A migration's DDL may run minutes on a large table without a byte: silence means much longer here. */
const MIGRATION_SILENCE_MS = 10 * 60_000;

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new ServiceUnavailableError(`DATABASE_URL names no database: ${url}`);
  return name;
}

/** Creates the database if it does not exist, via the server's `postgres` maintenance database. */
export async function createDatabaseIfMissing(url: string): Promise<boolean> {
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
  } catch (cause) {
    throw new ServiceUnavailableError(`${postgresHint(url)} (${(cause as Error).message})`, { cause });
  }
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`create database ${pg.escapeIdentifier(name)}`);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === '42P04') return false; // created concurrently
      throw e;
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  const name = databaseName(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    await client.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  } finally {
    await client.end();
  }
}

/** Idempotent: creates the database when missing and applies the committed migrations. */
export async function runMigrations(url: string): Promise<{ created: boolean }> {
  const created = await createDatabaseIfMissing(url);
  const handle = openDb(url, { max: 2, silenceTimeoutMs: MIGRATION_SILENCE_MS });
  try {
    const client = await handle.pool.connect();
    try {
      await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
      await migrate(handle.db, { migrationsFolder });
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
      client.release();
    }
  } finally {
    await handle.close();
  }
  return { created };
}
