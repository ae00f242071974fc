import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  budgetCounters,
  coverageProofs,
  gatewayExecutions,
  ingestPartitions,
  ingestStreams,
} from '../../src/db/schema.js';
import { migrationsFolder } from '../../src/paths.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';

/**
 * A database as a version before coverage proofs left it: windows done, billed calls audited, no
 * proof and no day counter. The carry-over migration fills both, and changes nothing when run again.
 */
const CARRY = readFileSync(join(migrationsFolder, '0006_carry_derived_state.sql'), 'utf8').split(
  '--> statement-breakpoint',
);

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function carry(): Promise<void> {
  for (const statement of CARRY) await db.db.execute(sql.raw(statement));
}

describe('the migration that carries derived state', () => {
  it('proves the windows an older version finished and counts today billed calls from the audit', async () => {
    const start = new Date('2025-08-19T12:00:00Z');
    const end = new Date('2025-09-19T11:59:58Z');
    await db.db.insert(ingestStreams).values({ streamKey: 'old', operation: 'earthquake', params: {} });
    await db.db.insert(ingestPartitions).values([
      {
        streamKey: 'old',
        partitionKey: 'w1',
        operation: 'earthquake',
        windowStart: start,
        windowEnd: end,
        state: 'done',
      },
      {
        streamKey: 'old',
        partitionKey: 'w2',
        operation: 'earthquake',
        windowStart: end,
        windowEnd: new Date('2025-10-01T00:00:00Z'),
        state: 'pending',
      },
    ]);
    const now = new Date();
    const row = { operation: 'earthquake', request: {}, startedAt: now, billed: true };
    await db.db
      .insert(gatewayExecutions)
      .values([row, row, { ...row, billed: false }, { ...row, startedAt: new Date(now.getTime() - 2 * 86_400_000) }]);
    await carry();
    await carry();
    const proofs = await db.db.select().from(coverageProofs);
    expect(proofs.map((p) => [p.streamKey, p.lo, p.hi])).toEqual([['old', start.getTime(), end.getTime()]]);
    const counters = await db.db.select().from(budgetCounters);
    expect(counters.map((c) => [c.scope, c.calls])).toEqual([['day', 2]]);
  });
});
