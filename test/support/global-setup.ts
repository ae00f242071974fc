import type { TestProject } from 'vitest/node';
import { ensureBuilt } from './build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
  }
}

const LOCAL_PG = 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
const LOCAL_REDIS = 'redis://127.0.0.1:6379';

async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Service URLs, in order: TEST_DATABASE_URL / TEST_REDIS_URL when given; containers when Docker
 * answers; the local servers otherwise (the CI machine runs both).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureBuilt();
  const stops: Array<() => Promise<unknown>> = [];
  let databaseUrl = process.env.TEST_DATABASE_URL;
  let redisUrl = process.env.TEST_REDIS_URL;
  if ((!databaseUrl || !redisUrl) && (await dockerAnswers())) {
    if (!databaseUrl) {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const pg = await new PostgreSqlContainer('postgres:16-alpine').start();
      stops.push(() => pg.stop());
      databaseUrl = pg.getConnectionUri();
    }
    if (!redisUrl) {
      const { RedisContainer } = await import('@testcontainers/redis');
      const redis = await new RedisContainer('redis:7-alpine').start();
      stops.push(() => redis.stop());
      redisUrl = redis.getConnectionUrl();
    }
  }
  project.provide('databaseUrl', databaseUrl ?? LOCAL_PG);
  project.provide('redisUrl', redisUrl ?? LOCAL_REDIS);
  return async () => {
    await Promise.all(stops.map((s) => s()));
  };
}
