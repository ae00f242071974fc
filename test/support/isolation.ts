import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openDb, type DbHandle } from '../../src/db/connection.js';
import { dropDatabase, runMigrations } from '../../src/db/migrate.js';
import { recordAnswerSize } from '../../src/db/gateway-knowledge.js';

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase extends DbHandle {
  url: string;
  drop(): Promise<void>;
}

/** A database of its own, migrated, for one test file or test. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const url = new URL(inject('databaseUrl'));
  url.pathname = `/${uniqueName('gi_test')}`;
  await runMigrations(url.toString());
  const handle = openDb(url.toString(), { max: 8 });
  return {
    ...handle,
    url: url.toString(),
    async drop() {
      await handle.close();
      await dropDatabase(url.toString());
    },
  };
}

/** A queue prefix of its own, so tests sharing one Redis never see each other's jobs. */
export function uniquePrefix(): string {
  return uniqueName('gi-test');
}

export function redisUrl(): string {
  return inject('redisUrl');
}

/**
 * Tells the workers that this gateway's cap is 200, as a probe of a real catalog would: tests whose
 * hand-made catalog holds a couple of events are about something else than proving completeness.
 */
export async function trustGatewayCap(db: TestDatabase, gatewayUrl: string): Promise<void> {
  const region = { lo: Date.UTC(2025, 0, 1), hi: Date.UTC(2025, 1, 1) };
  await recordAnswerSize(
    db.db,
    `${gatewayUrl.replace(/\/+$/, '')}|earthquake`,
    { size: 200, region },
    new Date(),
    24 * 3_600_000,
  );
}
