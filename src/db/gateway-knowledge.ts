/**
 * What workers learn about a gateway, in PostgreSQL so that every process shares it: the cap
 * (the largest answer seen lately, a proof of a lower bound while it is fresh) and how often
 * each order guess held (a hint for placing queries, never evidence). Reads are cheap and once per window.
 */
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
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
  /** A probe for the cap ran within the TTL. */
  probedRecently: boolean;
  orderStats: OrderStats;
}

/** Whose facts these are: every process that reads earthquakes from this base URL shares them. */
export function earthquakeGatewayKey(baseUrl: string): string {
  return `${baseUrl}|earthquake`;
}

const NO_FACTS: GatewayFacts = { capFloor: 1, probedRecently: false, orderStats: orderStatsSchema.parse(undefined) };

export async function readGatewayFacts(
  db: Db,
  gatewayKey: string,
  nowMs: number,
  ttlMs: number,
): Promise<GatewayFacts> {
  const [row] = await db.select().from(k).where(eq(k.gatewayKey, gatewayKey));
  if (!row) return NO_FACTS;
  const fresh = (at: Date | null) => at !== null && nowMs - at.getTime() < ttlMs;
  return {
    capFloor: fresh(row.capSeenAt) ? row.capFloor : 1,
    probedRecently: fresh(row.probedAt),
    orderStats: orderStatsSchema.parse(row.orderStats),
  };
}

/**
 * An answer of `size` events: the cap is at least that. A floor older than the TTL is replaced
 * rather than raised, so a gateway whose cap went down is relearned within the TTL.
 */
export async function recordAnswerSize(
  db: Db,
  gatewayKey: string,
  size: number,
  at: Date,
  ttlMs: number,
): Promise<void> {
  const staleBefore = new Date(at.getTime() - ttlMs);
  await db
    .insert(k)
    .values({ gatewayKey, capFloor: size, capSeenAt: at, orderStats: NO_FACTS.orderStats })
    .onConflictDoUpdate({
      target: k.gatewayKey,
      set: {
        capFloor: sql`case when ${k.capSeenAt} < ${staleBefore} then excluded.cap_floor
          else greatest(${k.capFloor}, excluded.cap_floor) end`,
        capSeenAt: sql`case when ${k.capSeenAt} < ${staleBefore} or excluded.cap_floor >= ${k.capFloor}
          then excluded.cap_seen_at else ${k.capSeenAt} end`,
        updatedAt: sql`now()`,
      },
    });
}

export async function recordProbe(db: Db, gatewayKey: string, at: Date): Promise<void> {
  await db
    .insert(k)
    .values({ gatewayKey, capFloor: 1, capSeenAt: new Date(0), probedAt: at, orderStats: NO_FACTS.orderStats })
    .onConflictDoUpdate({ target: k.gatewayKey, set: { probedAt: at, updatedAt: sql`now()` } });
}

/** Older evidence fades, so a gateway that changes its ways is followed within a few windows. */
const FADE = 0.8;

export async function recordOrderEvidence(db: Db, gatewayKey: string, seen: OrderStats): Promise<void> {
  await db.transaction(async (tx) => {
    await tx
      .insert(k)
      .values({ gatewayKey, capFloor: 1, capSeenAt: new Date(0), orderStats: NO_FACTS.orderStats })
      .onConflictDoNothing();
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
