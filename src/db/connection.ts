import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Socket } from 'node:net';
import pg from 'pg';
import { settledWithin } from '../deadline.js';
import { redactUrl } from '../config/env.js';
import { schema } from './schema.js';
import { ServiceUnavailableError } from '../errors.js';

/** The client is the pool: statements prepared once (db/prepared.ts) run on it directly. */
export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool };
/** Whatever builds an update: a connection, a transaction, or the renderer of prepared statements. */
export type Updater = Pick<NodePgDatabase<typeof schema>, 'update'>;
/** The transaction handle drizzle passes to `db.transaction` callbacks. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface DbHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
  /** Cuts off the statements running now (a shutdown past its deadline). */
  interrupt(): void;
  /** Hears each connection destroyed for its silence, whoever's statement it carried; returns the unsubscribe. */
  onSilence(listener: (e: Error) => void): () => void;
}

export const CONNECT_TIMEOUT_MS = 5_000;

export function postgresHint(url: string): string {
  return (
    `cannot reach PostgreSQL at ${redactUrl(url)}. Start it (docker compose up -d postgres, or ` +
    `pg_ctlcluster <version> main start) or point DATABASE_URL at a running server`
  );
}

/** A statement's connection that sends no byte this long is taken for silent and destroyed. */
export const DEFAULT_SILENCE_TIMEOUT_MS = 15_000;
/** How long close() waits for the pool to end before it destroys the sockets left. */
export const CLOSE_DEADLINE_MS = 1_000;
/** The server ends a session left idle inside a transaction this long (its client went silent). */
const IDLE_IN_TRANSACTION_MS = 60_000;
/**
 * A connection is closed after this long, on its release if checked out. A failover can leave open
 * connections on a server that has become a read-only standby (writes fail with 25006, an outage to
 * the workers) while new ones reach the new primary: none of them outlives this.
 */
export const MAX_CONNECTION_LIFETIME_MS = 5 * 60_000;
/** TCP keepalive probes on idle connections, so that a NAT or firewall keeps (or visibly drops) them. */
const KEEPALIVE_DELAY_MS = 5_000;

export interface DbOptions {
  max?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  silenceTimeoutMs?: number;
  maxLifetimeMs?: number;
}

/** node-postgres keeps a client's socket private; it is read, never changed. */
type ClientInternals = { connection?: { stream?: unknown } };

function socketOf(client: pg.PoolClient): Socket | null {
  const stream = (client as unknown as ClientInternals).connection?.stream;
  return stream instanceof Socket ? stream : null;
}

/** Destroyed as a lost connection (ETIMEDOUT), so that every caller retries it as one. */
function silenceError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ETIMEDOUT' });
}

/**
 * A connection can go silent without closing (a failover, a NAT that dropped its state): its
 * statement would wait for ever, since Node has no TCP user timeout. While a client is checked out
 * of the pool, the socket's idle timer destroys it when no byte came for `silenceMs`; the statement
 * then fails as a lost connection (retried by its caller on a fresh one) and the pool drops the client.
 */
function watchSilence(
  client: pg.PoolClient,
  silenceMs: number,
  sockets: Map<Socket, pg.PoolClient>,
  checkedOut: Set<pg.PoolClient>,
  heard: (e: Error) => void,
): void {
  const socket = socketOf(client);
  if (socket === null) return;
  sockets.set(socket, client);
  socket.once('close', () => sockets.delete(socket));
  socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
  socket.setTimeout(silenceMs, () => {
    if (!checkedOut.has(client)) return;
    const e = silenceError(`PostgreSQL connection silent for ${silenceMs} ms: destroyed`);
    socket.destroy(e);
    heard(e);
    // The path that went silent is likely the path of the pool's idle connections too: a retry
    // handed one of them would wait out the silence again. They are dropped; new ones are opened.
    for (const [other, c] of sockets) if (!checkedOut.has(c)) other.destroy();
  });
}

export function openDb(url: string, options: DbOptions = {}): DbHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
    // A session whose client went silent mid-transaction would hold its locks on the server for ever.
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    // Every statement here is short. PostgreSQL JIT-compiles a plan past jit_above_cost, which a count
    // over hundreds of windows reaches: compiling cost 0.9 s of a 50-year plan whose reads take 0.1 s.
    options: '-c jit=off',
    // Idle sockets die with a Postgres restart; the pool replaces them on next use.
    idleTimeoutMillis: 30_000,
    maxLifetimeSeconds: Math.max(1, Math.round((options.maxLifetimeMs ?? MAX_CONNECTION_LIFETIME_MS) / 1000)),
  });
  const sockets = new Map<Socket, pg.PoolClient>();
  const checkedOut = new Set<pg.PoolClient>();
  const listeners = new Set<(e: Error) => void>();
  const heard = (e: Error) => {
    for (const listener of listeners) listener(e);
  };
  // An idle client losing its server emits here; without a listener that would crash the process.
  pool.on('error', () => undefined);
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_err, client) => checkedOut.delete(client));
  pool.on('remove', (client) => checkedOut.delete(client));
  pool.on('connect', (client) => {
    // A checked-out client that loses its server (a restart: 57P01) emits on itself, not on the pool;
    // unheard, that would end the process. The query in progress fails and is retried by its caller.
    client.on('error', () => undefined);
    watchSilence(client, options.silenceTimeoutMs ?? DEFAULT_SILENCE_TIMEOUT_MS, sockets, checkedOut, heard);
  });
  // Statements still running when a shutdown's deadline passed are cut off: their callers see a lost connection.
  const interrupt = () => {
    for (const [socket, client] of sockets)
      if (checkedOut.has(client)) socket.destroy(silenceError('PostgreSQL statement cut off by shutdown'));
  };
  const close = async () => {
    // Whatever is still checked out now is stuck; ending a pool waits for each client to say
    // goodbye, which a silent one never does.
    interrupt();
    if (!(await settledWithin(pool.end(), CLOSE_DEADLINE_MS))) for (const socket of sockets.keys()) socket.destroy();
  };
  const onSilence = (listener: (e: Error) => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  return { db: drizzle(pool, { schema }), pool, close, interrupt, onSilence };
}

/**
 * Workers write: a database that takes no writes (a standby, a read replica) is named at once. Met
 * later, in a failover, a refused write is an outage waited out (25006), which a URL naming a
 * replica would make endless.
 */
export async function assertDbWritable(handle: DbHandle, url: string): Promise<void> {
  const r = await handle.pool.query<{ transaction_read_only: string }>('show transaction_read_only');
  if (r.rows[0]?.transaction_read_only === 'on') {
    throw new ServiceUnavailableError(
      `${redactUrl(url)} takes no writes (a standby or a read replica, or default_transaction_read_only): ` +
        'workers write, so DATABASE_URL must name the primary',
    );
  }
}

/** Fails within CONNECT_TIMEOUT_MS, naming the URL and how to start the server. */
export async function assertDbReachable(handle: DbHandle, url: string): Promise<void> {
  try {
    await handle.pool.query('select 1');
  } catch (cause) {
    const code = (cause as { code?: string }).code;
    if (code === '28P01' || code === '28000') {
      throw new ServiceUnavailableError(
        `PostgreSQL at ${redactUrl(url)} refused the login (${(cause as Error).message}): check the user and ` +
          'password of DATABASE_URL, and that pg_hba.conf lets that user in from here',
        { cause },
      );
    }
    if (code === '3D000') {
      throw new ServiceUnavailableError(
        `database of ${redactUrl(url)} does not exist: run \`gateway-ingest migrate\` first`,
        { cause },
      );
    }
    throw new ServiceUnavailableError(`${postgresHint(url)} (${(cause as Error).message})`, { cause });
  }
}
