/** The coverage_proofs table's only writer: one stream's proofs are rewritten under a lock of that stream. */
import { asc, eq, sql } from 'drizzle-orm';
import { applyProof, covers, type Proof } from '../domain/proofs.js';
import { PARTITION_STATE } from '../domain/partition.js';
import type { Db, Tx } from './connection.js';
import { coverageProofs as c, ingestPartitions as p } from './schema.js';

/** Records that `[lo, hi]` of the stream was proven complete at `provenAt`, inside the caller's transaction. */
export async function recordProof(
  tx: Tx,
  streamKey: string,
  proofs: ReadonlyArray<{ lo: number; hi: number }>,
  provenAt: Date,
): Promise<void> {
  if (proofs.length === 0) return;
  // Two workers finishing windows of one stream at once must not interleave their rewrites.
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`coverage:${streamKey}`}))`);
  const rows = await tx.select().from(c).where(eq(c.streamKey, streamKey)).orderBy(asc(c.lo));
  let next: Proof[] = rows.map((r) => ({ lo: r.lo, hi: r.hi, provenAtMs: r.provenAt.getTime() }));
  for (const p of proofs) next = applyProof(next, { ...p, provenAtMs: provenAt.getTime() });
  await tx.delete(c).where(eq(c.streamKey, streamKey));
  await tx.insert(c).values(next.map((p) => ({ streamKey, lo: p.lo, hi: p.hi, provenAt: new Date(p.provenAtMs) })));
}

export async function streamProofs(db: Db, streamKey: string): Promise<Proof[]> {
  const rows = await db.select().from(c).where(eq(c.streamKey, streamKey)).orderBy(asc(c.lo));
  return rows.map((r) => ({ lo: r.lo, hi: r.hi, provenAtMs: r.provenAt.getTime() }));
}

/**
 * Windows and year chunks done without a proof (finished by a version that wrote none, before or
 * during a rolling upgrade) are proven as of when they finished, so coverage never reads less than
 * the partitions show. Returns how many were proven.
 */
export async function proveDoneWithoutProof(db: Db): Promise<number> {
  const rows = await db.execute<{ stream_key: string; lo: string; hi: string; at: Date | string }>(sql`
    select ${p.streamKey} as stream_key,
      coalesce((extract(epoch from ${p.windowStart}) * 1000)::bigint, ${p.startYear}::bigint) as lo,
      coalesce((extract(epoch from ${p.windowEnd}) * 1000)::bigint, ${p.endYear}::bigint) as hi,
      coalesce(${p.completedAt}, ${p.updatedAt}) as at
    from ${p}
    where ${p.state} = ${PARTITION_STATE.done} and (${p.windowStart} is not null or ${p.startYear} is not null)
      and not exists (select 1 from ${c} where ${c.streamKey} = ${p.streamKey}
        and ${c.lo} <= coalesce((extract(epoch from ${p.windowStart}) * 1000)::bigint, ${p.startYear}::bigint)
        and ${c.hi} >= coalesce((extract(epoch from ${p.windowEnd}) * 1000)::bigint, ${p.endYear}::bigint))`);
  let proven = 0;
  for (const r of rows.rows) {
    const lo = Number(r.lo);
    const hi = Number(r.hi);
    const proofs = await streamProofs(db, r.stream_key);
    // Split between neighbouring proofs is still covered: nothing to add.
    if (covers(proofs, lo, hi)) continue;
    await db.transaction((tx) => recordProof(tx, r.stream_key, [{ lo, hi }], new Date(r.at)));
    proven++;
  }
  return proven;
}
