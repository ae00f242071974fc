import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/connection.js';
import { ingestPartitions } from '../db/schema.js';

export interface WaitProgress {
  total: number;
  done: number;
  failed: number;
}

export interface PartitionRef {
  streamKey: string;
  partitionKeys: string[];
}

async function progressOf(db: Db, refs: PartitionRef[]): Promise<WaitProgress> {
  let total = 0;
  let done = 0;
  let failed = 0;
  for (const ref of refs) {
    if (ref.partitionKeys.length === 0) continue;
    total += ref.partitionKeys.length;
    for (let i = 0; i < ref.partitionKeys.length; i += 1000) {
      const rows = await db
        .select({ state: ingestPartitions.state, n: sql<number>`count(*)::int` })
        .from(ingestPartitions)
        .where(and(eq(ingestPartitions.streamKey, ref.streamKey), inArray(ingestPartitions.partitionKey, ref.partitionKeys.slice(i, i + 1000))))
        .groupBy(ingestPartitions.state);
      for (const r of rows) {
        if (r.state === 'done') done += r.n;
        if (r.state === 'failed') failed += r.n;
      }
    }
  }
  return { total, done, failed };
}

/** Polls partition state, the source of truth whichever process runs the jobs. */
export async function waitForPartitions(
  db: Db,
  refs: PartitionRef[],
  onProgress: (p: WaitProgress) => void,
  options: { pollMs?: number; signal?: AbortSignal } = {},
): Promise<WaitProgress> {
  for (;;) {
    const p = await progressOf(db, refs);
    onProgress(p);
    if (p.done + p.failed >= p.total || options.signal?.aborted) return p;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
}
