import { Redis } from 'ioredis';
import { redactUrl } from '../config/env.js';
import { ServiceUnavailableError } from '../errors.js';

export const REDIS_CONNECT_TIMEOUT_MS = 5_000;
/**
 * A connection waiting for a reply that sends no byte this long is destroyed and replaced
 * (ioredis `socketTimeout`): above BullMQ's longest blocking wait (10 s), so a worker's idle
 * BZPOPMIN is never taken for silence.
 */
export const DEFAULT_REDIS_SILENCE_MS = 15_000;
/** TCP keepalive on idle connections. */
const KEEPALIVE_DELAY_MS = 5_000;

export function redisHint(url: string): string {
  return (
    `cannot reach Redis at ${redactUrl(url)}. Start it (docker compose up -d redis, or ` +
    `redis-server --daemonize yes) or point REDIS_URL at a running server`
  );
}

/**
 * Connections for BullMQ. Workers need `maxRetriesPerRequest: null` so that a Redis restart pauses
 * them instead of failing jobs; the retry strategy keeps reconnecting with a capped delay.
 */
export function openRedis(url: string, role: 'worker' | 'producer', silenceMs = DEFAULT_REDIS_SILENCE_MS): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: role === 'worker' ? null : 3,
    enableReadyCheck: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    socketTimeout: silenceMs,
    keepAlive: KEEPALIVE_DELAY_MS,
    retryStrategy: (times) => Math.min(times * 200, 5_000),
  });
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
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    await probe.ping();
  } catch (cause) {
    throw new ServiceUnavailableError(`${redisHint(url)} (${(cause as Error).message})`, { cause });
  } finally {
    probe.disconnect();
  }
}
