/** The coverage_proofs table's only writer: one stream's proofs are rewritten under a lock of that stream. */
import { asc, eq, sql } from 'drizzle-orm';
import { applyProof, type Proof } from '../domain/proofs.js';
import type { Db, Tx } from './connection.js';
import { coverageProofs as c } from './schema.js';

/** Records that `[lo, hi]` of the stream was proven complete at `provenAt`, inside the caller's transaction. */
export async function recordProof(tx: Tx, streamKey: string, proofs: ReadonlyArray<{ lo: number; hi: number }>, provenAt: Date): Promise<void> {
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
