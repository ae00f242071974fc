import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../connection.js';
import { ingestPartitions } from '../schema.js';

export interface PlannedPartition {
  streamKey: string;
  partitionKey: string;
  operation: 'earthquake' | 'indicator';
  windowStart?: Date;
  windowEnd?: Date;
  startYear?: number;
  endYear?: number;
  jobId: string;
}

/**
 * Records planned partitions as pending. A refresh resets done ones (and their frontier) so the
 * window is read again; without refresh the planner never plans a done window in the first place.
 */
export async function recordPlannedPartitions(db: Db, planned: PlannedPartition[], refresh: boolean): Promise<void> {
  if (planned.length === 0) return;
  for (let i = 0; i < planned.length; i += 1000) {
    const batch = planned.slice(i, i + 1000).map((p) => ({ ...p, state: 'pending', frontier: null }));
    await db
      .insert(ingestPartitions)
      .values(batch)
      .onConflictDoUpdate({
        target: [ingestPartitions.streamKey, ingestPartitions.partitionKey],
        set: {
          jobId: sql`excluded.job_id`,
          updatedAt: sql`now()`,
          state: refresh
            ? sql`'pending'`
            : sql`case when ${ingestPartitions.state} = 'failed' then 'pending' else ${ingestPartitions.state} end`,
          frontier: refresh ? sql`null` : sql`${ingestPartitions.frontier}`,
          lastError: refresh ? sql`null` : sql`${ingestPartitions.lastError}`,
        },
      });
  }
}

export async function loadPartition(db: Db, streamKey: string, partitionKey: string) {
  const rows = await db
    .select()
    .from(ingestPartitions)
    .where(and(eq(ingestPartitions.streamKey, streamKey), eq(ingestPartitions.partitionKey, partitionKey)));
  return rows[0] ?? null;
}

export async function markPartitionFailed(db: Db, streamKey: string, partitionKey: string, error: string, kind: string): Promise<void> {
  await db
    .update(ingestPartitions)
    .set({ state: 'failed', lastError: error, lastErrorKind: kind, updatedAt: new Date() })
    .where(and(eq(ingestPartitions.streamKey, streamKey), eq(ingestPartitions.partitionKey, partitionKey)));
}

/** Done partitions of a stream, for skip logic and coverage. */
export async function donePartitions(db: Db, streamKeys: string[]) {
  if (streamKeys.length === 0) return [];
  return db
    .select({
      streamKey: ingestPartitions.streamKey,
      windowStart: ingestPartitions.windowStart,
      windowEnd: ingestPartitions.windowEnd,
      startYear: ingestPartitions.startYear,
      endYear: ingestPartitions.endYear,
    })
    .from(ingestPartitions)
    .where(and(inArray(ingestPartitions.streamKey, streamKeys), eq(ingestPartitions.state, 'done')));
}
