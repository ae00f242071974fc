import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redactUrl, type RedisClusterSettings } from '../config/env.js';
import { withDeadline } from '../deadline.js';
import { ServiceUnavailableError } from '../errors.js';

/** A single Redis or a Redis Cluster: BullMQ takes either, and the product only pings, listens and disconnects. */
export type RedisConnection = Redis | Cluster;

export const REDIS_CONNECT_TIMEOUT_MS = 5_000;
/**
 * A connection waiting for a reply that sends no byte this long is destroyed and replaced
 * (ioredis `socketTimeout`): above BullMQ's longest blocking wait (10 s), so a worker's idle
 * BZPOPMIN is never taken for silence.
 */
export const DEFAULT_REDIS_SILENCE_MS = 15_000;
/** TCP keepalive on idle connections. */
const KEEPALIVE_DELAY_MS = 5_000;
/**
 * How long one cluster node may take to list the slots (connecting included) before the next node
 * is asked: below the connect timeout, so that one silent startup node does not use up the whole
 * start-up deadline while the others answer.
 */
const CLUSTER_SLOTS_TIMEOUT_MS = 2_000;

const reconnectDelayMs = (times: number): number => Math.min(times * 200, 5_000);

export function redisHint(url: string): string {
  return (
    `cannot reach Redis at ${redactUrl(url)}. Start it (docker compose up -d redis, or ` +
    `redis-server --daemonize yes) or point REDIS_URL at a running server`
  );
}

/** Names the nodes, never the password. */
export function redisClusterHint(c: RedisClusterSettings): string {
  const nodes = c.nodes.map(nodeLabel).join(',');
  return (
    `cannot reach the Redis Cluster at ${nodes} (REDIS_CLUSTER_NODES). Check that the nodes are up, that ` +
    '`redis-cli -c -h HOST -p PORT cluster info` says cluster_state:ok, and that REDIS_USERNAME, REDIS_PASSWORD ' +
    `and REDIS_TLS (now ${c.tls ? '1' : '0'}) match the cluster; ` +
    'a Redis not in cluster mode is set with REDIS_URL instead'
  );
}

const nodeLabel = (n: { host: string; port: number }): string =>
  n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`;

/**
 * A failover demotes the primary this connection reached to a replica, which refuses every write with
 * READONLY while the address it was reached by names the new primary: the connection is made again
 * (the address resolved again), and the refused command, which wrote nothing, sent again.
 */
export function reconnectOnReadOnly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

/**
 * The deadlines every connection keeps, to a single Redis or to each node of a cluster. Workers need
 * `maxRetriesPerRequest: null` so that a Redis restart pauses them instead of failing jobs.
 */
function connectionOptions(role: 'worker' | 'producer', silenceMs: number) {
  return {
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableReadyCheck: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    socketTimeout: silenceMs,
    keepAlive: KEEPALIVE_DELAY_MS,
    reconnectOnError: reconnectOnReadOnly,
  } satisfies RedisOptions;
}

/** Connections for BullMQ; the retry strategy keeps reconnecting with a capped delay. */
export function openRedis(url: string, role: 'worker' | 'producer', silenceMs = DEFAULT_REDIS_SILENCE_MS): Redis {
  return clearingSilenceTimer(
    new Redis(url, { ...connectionOptions(role, silenceMs), retryStrategy: reconnectDelayMs }),
  );
}

/**
 * ioredis (5.x) arms its `socketTimeout` timer per command and clears it only when data comes: a
 * connection closed during a blocking command (a BullMQ worker's BZPOPMIN at shutdown) leaves it
 * running, which holds the process alive for the whole silence timeout and, after a reconnect,
 * destroys the new socket. Cleared on close, here and on every duplicate (BullMQ duplicates the
 * connection it is given for its blocking reads).
 */
function clearingSilenceTimer(redis: Redis): Redis {
  const internals = redis as unknown as { socketTimeoutTimer?: NodeJS.Timeout };
  redis.on('close', () => {
    clearTimeout(internals.socketTimeoutTimer);
    internals.socketTimeoutTimer = undefined;
  });
  const duplicate = redis.duplicate.bind(redis);
  redis.duplicate = (override) => clearingSilenceTimer(duplicate(override));
  return redis;
}

/** What a cluster connection needs beyond the per-node deadlines: credentials, TLS, the slot-map timeout. */
function clusterOptions(c: RedisClusterSettings, redisOptions: ClusterOptions['redisOptions']): ClusterOptions {
  return {
    slotsRefreshTimeout: CLUSTER_SLOTS_TIMEOUT_MS,
    // With TLS, ioredis would resolve each node's name itself and dial the address, and the
    // certificate, issued to the name, would then be checked against an IP: leaving the lookup to
    // the TLS connection keeps the name (ioredis's own advice for TLS clusters such as ElastiCache).
    ...(c.tls
      ? { dnsLookup: (address: string, done: (err: null, address: string) => void) => done(null, address) }
      : {}),
    redisOptions: {
      ...redisOptions,
      ...(c.username === null ? {} : { username: c.username }),
      ...(c.password === null ? {} : { password: c.password }),
      ...(c.tls ? { tls: {} } : {}),
    },
  };
}

/**
 * The options of a cluster connection for BullMQ, with the single node's deadlines on every node. A
 * lost node is found again through the slot map (ioredis asks the others); when every node is lost
 * the cluster reconnects from its startup nodes with the same capped delay as a single Redis.
 */
export function redisClusterOptions(
  c: RedisClusterSettings,
  role: 'worker' | 'producer',
  silenceMs = DEFAULT_REDIS_SILENCE_MS,
): ClusterOptions {
  return {
    ...clusterOptions(c, connectionOptions(role, silenceMs)),
    enableReadyCheck: true,
    clusterRetryStrategy: reconnectDelayMs,
  };
}

export function openRedisCluster(
  c: RedisClusterSettings,
  role: 'worker' | 'producer',
  silenceMs = DEFAULT_REDIS_SILENCE_MS,
): Cluster {
  return new Cluster(c.nodes, redisClusterOptions(c, role, silenceMs));
}

/** Fails within REDIS_CONNECT_TIMEOUT_MS, naming the URL and how to start the server. */
export async function assertRedisReachable(url: string): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // A refusal (NOAUTH, WRONGPASS) comes as an event; the connect then fails only as "Connection is closed".
  let refusal: string | null = null;
  probe.on('error', (e: Error) => (refusal = e.message));
  let role: unknown;
  try {
    await probe.connect();
    await probe.ping();
    // A managed Redis may not offer ROLE: then nothing is known of it, which is no reason to stop.
    role = await probe.call('role').then(
      (r) => (Array.isArray(r) ? (r as unknown[])[0] : null),
      () => null,
    );
  } catch (cause) {
    const why = refusal ?? (cause as Error).message;
    if (/^(NOAUTH|WRONGPASS)/.test(why))
      throw new ServiceUnavailableError(
        `Redis at ${redactUrl(url)} refused the credentials (${why}): give its password in REDIS_URL ` +
          '(redis://:PASSWORD@HOST:PORT, or redis://USER:PASSWORD@HOST:PORT for an ACL user)',
        { cause },
      );
    throw new ServiceUnavailableError(`${redisHint(url)} (${why})`, { cause });
  } finally {
    probe.disconnect();
  }
  // Every command of the product writes; against a replica each would be refused and asked again.
  if (role === 'slave' || role === 'replica') {
    throw new ServiceUnavailableError(
      `Redis at ${redactUrl(url)} is a read-only replica: REDIS_URL must name the primary`,
    );
  }
}

/**
 * Fails within REDIS_CONNECT_TIMEOUT_MS when no startup node answers or the cluster does not say
 * cluster_state:ok (its ready check), naming the nodes.
 */
export async function assertRedisClusterReachable(c: RedisClusterSettings): Promise<void> {
  const probe = new Cluster(c.nodes, {
    ...clusterOptions(c, { connectTimeout: REDIS_CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 0 }),
    lazyConnect: true,
    enableReadyCheck: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: () => null,
  });
  // The connect error says only "None of startup nodes is available"; the last node's own error,
  // reported as an event, says why (refused, a wrong password, a Redis without cluster mode).
  let nodeError: string | null = null;
  probe.on('error', (e: Error & { lastNodeError?: unknown }) => {
    if (e.lastNodeError instanceof Error) nodeError = e.lastNodeError.message;
  });
  try {
    await withDeadline(probe.connect(), REDIS_CONNECT_TIMEOUT_MS, 'Redis Cluster');
    await withDeadline(probe.ping(), REDIS_CONNECT_TIMEOUT_MS, 'Redis Cluster');
  } catch (cause) {
    const why = [(cause as Error).message, nodeError].filter((m) => m !== null).join(': ');
    throw new ServiceUnavailableError(`${redisClusterHint(c)} (${why})`, { cause });
  } finally {
    probe.disconnect();
  }
}
