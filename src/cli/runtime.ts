import { Option } from 'commander';
import { insecureGatewayProblem, parseEnv, type ResolvedEnv } from '../config/env.js';
import { assertDbReachable, openDb, type DbHandle } from '../db/connection.js';
import { UndiciGateway, type Gateway } from '../gateway/client.js';
import { createLog, type Log } from '../log.js';
import { openQueue, type QueueSettings } from '../queue/queues.js';
import {
  assertRedisClusterReachable,
  assertRedisReachable,
  openRedis,
  openRedisCluster,
  type RedisConnection,
} from '../queue/redis.js';
import { type Operation } from '../domain/spec.js';
import { UsageError } from '../errors.js';

/** What a command's flags override in the environment. */
export interface EnvFlags {
  /** `--allow-insecure-http`: the same as GATEWAY_ALLOW_INSECURE_HTTP=1 for this run. */
  allowInsecureHttp?: boolean;
}

/** The flag of every command that calls the gateway. */
export function allowInsecureHttpOption(): Option {
  return new Option(
    '--allow-insecure-http',
    'allow plain http:// to a gateway that is not on this machine ' +
      '(MARKET_KEY travels in clear; also GATEWAY_ALLOW_INSECURE_HTTP=1)',
  );
}

/** The only place that reads process.env: parsed once, into a resolved type. */
export function loadEnv(env: NodeJS.ProcessEnv = process.env, flags: EnvFlags = {}): ResolvedEnv {
  // The flag sets the variable before parsing, so the resolved env is the one source of truth.
  return parseEnv(flags.allowInsecureHttp ? { ...env, GATEWAY_ALLOW_INSECURE_HTTP: '1' } : env);
}

export function cliLog(env: ResolvedEnv): Log {
  return createLog(env.logLevel);
}

export async function connectDb(env: ResolvedEnv): Promise<DbHandle> {
  const handle = openDb(env.databaseUrl, { silenceTimeoutMs: env.dbSilenceTimeoutMs });
  try {
    await assertDbReachable(handle, env.databaseUrl);
  } catch (e) {
    await handle.close().catch(() => undefined);
    throw e;
  }
  return handle;
}

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
