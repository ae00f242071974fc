/**
 * What workers learn about a gateway, in PostgreSQL so that every process shares it: the cap
 * (the largest answer seen lately, a proof of a lower bound while it is fresh, and where it was
 * seen), the latest cap probe, how often each order guess held (a hint for placing queries, never
 * evidence), and how much of what re-reads counted again was new (a prior for sizing, never
 * evidence). Reads are cheap and once per window.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import * as z from 'zod';
import type { Db } from './connection.js';
import { gatewayKnowledge as k } from './schema.js';

const tally = z.object({ confirmed: z.number(), refuted: z.number() });
const orderStatsSchema = z
  .object({ newest: tally, oldest: tally })
  .catch({ newest: { confirmed: 0, refuted: 0 }, oldest: { confirmed: 0, refuted: 0 } });
export type OrderStats = z.infer<typeof orderStatsSchema>;

export interface GatewayFacts {
  /** The largest answer seen within the TTL: the gateway's cap is at least this. 1 when unknown. */
  capFloor: number;
  /** The cap as cap probes measured it within the TTL (a silent cap below max_results), or null. */
  measuredCap: number | null;
  /** The cap as probes last measured it, however long ago, or null. */
  measuredCapBefore: number | null;
  /** The region of the largest answer recorded, however old: where a probe finds many events. */
  capRegion: { lo: number; hi: number } | null;
  orderStats: OrderStats;
  /** Stored events re-reads counted again within the TTL, and how many more their answers held; null when none. */
  recounted: { stored: number; added: number } | null;
}

/** Whose facts these are: every process that reads earthquakes from this base URL shares them. */
export function earthquakeGatewayKey(baseUrl: string): string {
  return `${baseUrl}|earthquake`;
}

const NO_FACTS: GatewayFacts = {
  capFloor: 1,
  measuredCap: null,
  measuredCapBefore: null,
  capRegion: null,
  orderStats: orderStatsSchema.parse(undefined),
  recounted: null,
};

/** A row of a gateway nothing was learned of yet: what an insert starts from before its own facts. */
const blankRow = (gatewayKey: string) => ({
  gatewayKey,
  capFloor: 1,
  capSeenAt: new Date(0),
  orderStats: NO_FACTS.orderStats,
});

export async function readGatewayFacts(
  db: Db,
  gatewayKey: string,
  nowMs: number,
  ttlMs: number,
): Promise<GatewayFacts> {
  const [row] = await db.select().from(k).where(eq(k.gatewayKey, gatewayKey));
  if (!row) return NO_FACTS;
  const fresh = (at: Date | null) => at !== null && nowMs - at.getTime() < ttlMs;
  const region = row.capRegionLo !== null && row.capRegionHi !== null;
  return {
    capFloor: fresh(row.capSeenAt) ? row.capFloor : 1,
    measuredCap: fresh(row.probedAt) ? row.measuredCap : null,
    measuredCapBefore: row.measuredCap,
    capRegion: region ? { lo: row.capRegionLo!, hi: row.capRegionHi! } : null,
    orderStats: orderStatsSchema.parse(row.orderStats),
    recounted:
      fresh(row.recountedAt) && row.recountStored > 0 ? { stored: row.recountStored, added: row.recountAdded } : null,
  };
}

/**
 * An answer of `size` events to a query of `region`: the cap is at least that. A floor older than
 * the TTL is replaced rather than raised, so a gateway whose cap went down is relearned within the
 * TTL. The region is kept with the floor it set, lapsed or not: an unfiltered query there holds at
 * least as many events, so that is where a later probe asks.
 */
export async function recordAnswerSize(
  db: Db,
  gatewayKey: string,
  answer: { size: number; region: { lo: number; hi: number } },
  at: Date,
  ttlMs: number,
): Promise<void> {
  const staleBefore = new Date(at.getTime() - ttlMs);
  const takes = sql`(${k.capSeenAt} < ${staleBefore} or excluded.cap_floor >= ${k.capFloor})`;
  // The region of the largest answer ever seen: a lapsed floor's region is kept until a larger answer replaces it.
  const widest = sql`(${k.capRegionLo} is null or excluded.cap_floor >= ${k.capFloor})`;
  await db
    .insert(k)
    .values({
      gatewayKey,
      capFloor: answer.size,
      capSeenAt: at,
      capRegionLo: answer.region.lo,
      capRegionHi: answer.region.hi,
      orderStats: NO_FACTS.orderStats,
    })
    .onConflictDoUpdate({
      target: k.gatewayKey,
      set: {
        capFloor: sql`case when ${k.capSeenAt} < ${staleBefore} then excluded.cap_floor
          else greatest(${k.capFloor}, excluded.cap_floor) end`,
        capSeenAt: sql`case when ${takes} then excluded.cap_seen_at else ${k.capSeenAt} end`,
        capRegionLo: sql`case when ${widest} then excluded.cap_region_lo else ${k.capRegionLo} end`,
        capRegionHi: sql`case when ${widest} then excluded.cap_region_hi else ${k.capRegionHi} end`,
        updatedAt: sql`now()`,
      },
    });
}

/** Cap probes measured the cap at `size` events. */
export async function recordMeasuredCap(db: Db, gatewayKey: string, size: number, at: Date): Promise<void> {
  await db
    .insert(k)
    .values({ ...blankRow(gatewayKey), probedAt: at, measuredCap: size })
    .onConflictDoUpdate({
      target: k.gatewayKey,
      set: { probedAt: at, measuredCap: size, probingUntil: null, updatedAt: sql`now()` },
    });
}

/** Older evidence fades, so a gateway that changes its ways is followed within a few windows. */
const FADE = 0.8;

export async function recordOrderEvidence(db: Db, gatewayKey: string, seen: OrderStats): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.insert(k).values(blankRow(gatewayKey)).onConflictDoNothing();
    const [row] = await tx
      .select({ orderStats: k.orderStats })
      .from(k)
      .where(eq(k.gatewayKey, gatewayKey))
      .for('update');
    const old = orderStatsSchema.parse(row?.orderStats);
    const blend = (d: 'newest' | 'oldest') => ({
      confirmed: FADE * old[d].confirmed + seen[d].confirmed,
      refuted: FADE * old[d].refuted + seen[d].refuted,
    });
    await tx
      .update(k)
      .set({ orderStats: { newest: blend('newest'), oldest: blend('oldest') }, updatedAt: new Date() })
      .where(eq(k.gatewayKey, gatewayKey));
  });
}

/**
 * A re-read counted `recount.stored` stored events again, and its answers held `recount.added` more:
 * added to what earlier reads counted, which fades by FADE a read so that the share follows a
 * catalog whose changes change. Counts older than the TTL are replaced, not added to: a share
 * learned months ago says little of how much changed since the last read.
 */
export async function recordRecount(
  db: Db,
  gatewayKey: string,
  recount: { stored: number; added: number },
  at: Date,
  ttlMs: number,
): Promise<void> {
  const staleBefore = new Date(at.getTime() - ttlMs);
  const keeps = sql`(${k.recountedAt} is not null and ${k.recountedAt} >= ${staleBefore})`;
  const fade = (c: AnyPgColumn) => sql`case when ${keeps} then ${FADE} * ${c} else 0 end`;
  await db
    .insert(k)
    .values({ ...blankRow(gatewayKey), recountStored: recount.stored, recountAdded: recount.added, recountedAt: at })
    .onConflictDoUpdate({
      target: k.gatewayKey,
      set: {
        recountStored: sql`${fade(k.recountStored)} + excluded.recount_stored`,
        recountAdded: sql`${fade(k.recountAdded)} + excluded.recount_added`,
        recountedAt: sql`greatest(${k.recountedAt}, excluded.recounted_at)`,
        updatedAt: sql`now()`,
      },
    });
}

/**
 * Takes the probe of this gateway for `leaseMs`: true when no other worker holds it. Others wait
 * for its answer (or the lease's end) instead of paying for a probe of their own.
 */
export async function claimProbe(db: Db, gatewayKey: string, leaseMs: number): Promise<boolean> {
  await db.insert(k).values(blankRow(gatewayKey)).onConflictDoNothing();
  const rows = await db
    .update(k)
    .set({ probingUntil: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
    .where(and(eq(k.gatewayKey, gatewayKey), sql`(${k.probingUntil} is null or ${k.probingUntil} < now())`))
    .returning({ key: k.gatewayKey });
  return rows.length > 0;
}

/** The probe answered (or failed): the next worker that needs one need not wait. */
export async function releaseProbe(db: Db, gatewayKey: string): Promise<void> {
  await db.update(k).set({ probingUntil: null }).where(eq(k.gatewayKey, gatewayKey));
}
