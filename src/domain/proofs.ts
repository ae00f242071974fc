/**
 * Proven coverage: when each part of a stream's range was last proven complete. Intervals are
 * closed and integer (epoch milliseconds, or years), disjoint and sorted. A new proof replaces
 * whatever it overlaps; neighbours whose proof times are close, relative to their age, merge and
 * keep the older time (never claiming a part fresher than it is), so a stream re-read every few
 * minutes for years keeps a few hundred intervals, not one per run.
 */
export interface Proof {
  lo: number;
  hi: number;
  provenAtMs: number;
}

/** Neighbours proven within this of each other always merge. */
export const MERGE_MIN_MS = 60_000;
/** ... and so do neighbours proven within this share of the older one's age. */
export const MERGE_AGE_SHARE = 0.1;

function minus(e: Proof, cut: Proof): Proof[] {
  if (cut.hi < e.lo || cut.lo > e.hi) return [e];
  const out: Proof[] = [];
  if (e.lo < cut.lo) out.push({ ...e, hi: cut.lo - 1 });
  if (e.hi > cut.hi) out.push({ ...e, lo: cut.hi + 1 });
  return out;
}

function close(a: Proof, b: Proof, nowMs: number): boolean {
  const older = Math.min(a.provenAtMs, b.provenAtMs);
  return Math.abs(a.provenAtMs - b.provenAtMs) <= Math.max(MERGE_MIN_MS, MERGE_AGE_SHARE * (nowMs - older));
}

/** The stream's proofs after `proof`, at `proof.provenAtMs`. */
export function applyProof(existing: readonly Proof[], proof: Proof): Proof[] {
  if (proof.lo > proof.hi) return [...existing];
  const parts = [...existing.flatMap((e) => minus(e, proof)), proof].sort((a, b) => a.lo - b.lo);
  const merged: Proof[] = [];
  for (const p of parts) {
    const last = merged[merged.length - 1];
    if (last && p.lo <= last.hi + 1 && close(last, p, proof.provenAtMs)) {
      merged[merged.length - 1] = {
        lo: last.lo,
        hi: Math.max(last.hi, p.hi),
        provenAtMs: Math.min(last.provenAtMs, p.provenAtMs),
      };
    } else merged.push(p);
  }
  return merged;
}

/** Pure: `proofs` (sorted by lo) cover [lo, hi], allowing gaps of at most `slack` between them. */
export function covers(proofs: readonly Pick<Proof, 'lo' | 'hi'>[], lo: number, hi: number, slack = 1): boolean {
  let reached = lo;
  for (const p of proofs) if (p.lo <= reached + slack && p.hi > reached) reached = p.hi;
  return reached >= hi;
}
