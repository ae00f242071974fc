/**
 * The connections of the commands that queue work or call the gateway: Redis, the queues, the
 * gateway client. Apart from runtime.ts so that a command using only PostgreSQL loads none of them.
 */
import { insecureGatewayProblem, type ResolvedEnv } from '../config/env.js';
import { type Operation } from '../domain/spec.js';
import { UsageError } from '../errors.js';
import { UndiciGateway, type Gateway } from '../gateway/client.js';
import { openQueue, type QueueSettings } from '../queue/queues.js';
import {
  assertRedisClusterReachable,
  assertRedisReachable,
  openRedis,
  openRedisCluster,
  type RedisConnection,
} from '../queue/redis.js';

/** The single Redis at REDIS_URL, or the cluster of REDIS_CLUSTER_NODES when it is set. */
export async function connectRedis(env: ResolvedEnv, role: 'worker' | 'producer'): Promise<RedisConnection> {
  const cluster = env.redisCluster;
  if (cluster === null) await assertRedisReachable(env.redisUrl);
  else await assertRedisClusterReachable(cluster);
  const redis =
    cluster === null
      ? openRedis(env.redisUrl, role, env.redisSilenceTimeoutMs)
      : openRedisCluster(cluster, role, env.redisSilenceTimeoutMs);
  redis.on('error', () => undefined); // reconnects on its own; readiness reports the outage
  return redis;
}

export function queueSettings(env: ResolvedEnv, connection: RedisConnection): QueueSettings {
  return { connection, prefix: env.queuePrefix };
}

export function openQueues(env: ResolvedEnv, connection: RedisConnection) {
  const s = queueSettings(env, connection);
  return { earthquake: openQueue('earthquake', s), indicator: openQueue('indicator', s) } satisfies Record<
    Operation,
    unknown
  >;
}

/** The gateway settings are required only by commands that call it. */
export function gatewayFromEnv(env: ResolvedEnv): Gateway {
  const { baseUrl, key, authHeader, timeoutMs } = env.gateway;
  const missing = [!baseUrl && 'GATEWAY_BASE_URL', !key && 'MARKET_KEY'].filter(Boolean);
  if (missing.length > 0) throw new UsageError(`${missing.join(' and ')} must be set to call the gateway`);
  const insecure = insecureGatewayProblem(baseUrl!, env.gateway.allowInsecureHttp);
  if (insecure !== null) throw new UsageError(insecure);
  return new UndiciGateway({ baseUrl: baseUrl!, key: key!, authHeader, timeoutMs });
}
