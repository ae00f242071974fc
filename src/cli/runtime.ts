import type { Redis } from 'ioredis';
import { ConfigError, parseEnv, type ResolvedEnv } from '../config/env.js';
import { assertDbReachable, openDb, type DbHandle } from '../db/connection.js';
import { UndiciGateway, type Gateway } from '../gateway/client.js';
import { createLog, type Log } from '../log.js';
import { openQueue, type QueueSettings } from '../queue/queues.js';
import { assertRedisReachable, openRedis } from '../queue/redis.js';
import type { Operation } from '../gateway/schemas.js';
import { UsageError } from './exit.js';

/** The only place that reads process.env: parsed once, into a resolved type. */
export function loadEnv(env: NodeJS.ProcessEnv = process.env): ResolvedEnv {
  try {
    return parseEnv(env);
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
}

export function cliLog(env: ResolvedEnv): Log {
  return createLog(env.logLevel);
}

export async function connectDb(env: ResolvedEnv): Promise<DbHandle> {
  const handle = openDb(env.databaseUrl);
  try {
    await assertDbReachable(handle, env.databaseUrl);
  } catch (e) {
    await handle.close().catch(() => undefined);
    throw e;
  }
  return handle;
}

export async function connectRedis(env: ResolvedEnv, role: 'worker' | 'producer'): Promise<Redis> {
  await assertRedisReachable(env.redisUrl);
  const redis = openRedis(env.redisUrl, role);
  redis.on('error', () => undefined); // reconnects on its own; readiness reports the outage
  return redis;
}

export function queueSettings(env: ResolvedEnv, connection: Redis): QueueSettings {
  return { connection, prefix: env.queuePrefix, attempts: env.jobAttempts, retryBaseDelayMs: env.retryBaseDelayMs };
}

export function openQueues(env: ResolvedEnv, connection: Redis) {
  const s = queueSettings(env, connection);
  return { earthquake: openQueue('earthquake', s), indicator: openQueue('indicator', s) } satisfies Record<Operation, unknown>;
}

/** The gateway settings are required only by commands that call it. */
export function gatewayFromEnv(env: ResolvedEnv): Gateway {
  const { baseUrl, key, authHeader, timeoutMs } = env.gateway;
  const missing = [!baseUrl && 'GATEWAY_BASE_URL', !key && 'MARKET_KEY'].filter(Boolean);
  if (missing.length > 0) throw new UsageError(`${missing.join(' and ')} must be set to call the gateway`);
  return new UndiciGateway({ baseUrl: baseUrl!, key: key!, authHeader, timeoutMs });
}
