import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { redactUrl } from '../config/env.js';
import { schema } from './schema.js';
import { ServiceUnavailableError } from '../errors.js';

export type Db = NodePgDatabase<typeof schema>;
/** The transaction handle drizzle passes to `db.transaction` callbacks. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface DbHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

export const CONNECT_TIMEOUT_MS = 5_000;

export function postgresHint(url: string): string {
  return (
    `cannot reach PostgreSQL at ${redactUrl(url)}. Start it (docker compose up -d postgres, or ` +
    `pg_ctlcluster <version> main start) or point DATABASE_URL at a running server`
  );
}

export function openDb(url: string, options: { max?: number; connectTimeoutMs?: number; statementTimeoutMs?: number } = {}): DbHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    // Idle sockets die with a Postgres restart; the pool replaces them on next use.
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server emits here; without a listener that would crash the process.
  pool.on('error', () => undefined);
  // A checked-out client that loses its server (a restart: 57P01) emits on itself, not on the pool;
  // unheard, that would end the process. The query in progress fails and is retried by its caller.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return { db: drizzle(pool, { schema }), pool, close: () => pool.end() };
}

/** Fails within CONNECT_TIMEOUT_MS, naming the URL and how to start the server. */
export async function assertDbReachable(handle: DbHandle, url: string): Promise<void> {
  try {
    await handle.pool.query('select 1');
  } catch (cause) {
    if ((cause as { code?: string }).code === '3D000') {
      throw new ServiceUnavailableError(`database of ${redactUrl(url)} does not exist: run \`gateway-ingest migrate\` first`, { cause });
    }
    throw new ServiceUnavailableError(`${postgresHint(url)} (${(cause as Error).message})`, { cause });
  }
}
