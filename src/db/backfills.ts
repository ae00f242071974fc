/**
 * The `backfills` table: one row per `backfill` command, with the control state an operator sets
 * and its cap on billed calls. Each write is one statement; partition rows are written elsewhere
 * (db/partitions.ts).
 */
import { and, desc, eq, ne, sql } from 'drizzle-orm';
import { BACKFILL_CONTROL, backfillControlSchema, type BackfillControl } from '../domain/backfill.js';
import type { Operation } from '../domain/spec.js';
import type { Db } from './connection.js';
import { backfills as b } from './schema.js';

export interface NewBackfill {
  id: string;
  operation: Operation;
  description: string;
  streamKeys: string[];
  maxBilledCalls: number | null;
}

export interface BackfillRecord extends NewBackfill {
  control: BackfillControl;
  createdAt: Date;
  updatedAt: Date;
}

/** False when the id is taken (the caller draws another). */
export async function insertBackfill(db: Db, x: NewBackfill): Promise<boolean> {
  const rows = await db
    .insert(b)
    .values({
      id: x.id,
      operation: x.operation,
      description: x.description,
      streamKeys: x.streamKeys,
      maxBilledCalls: x.maxBilledCalls,
    })
    .onConflictDoNothing()
    .returning({ id: b.id });
  return rows.length === 1;
}

type Row = typeof b.$inferSelect;

function recordOf(r: Row): BackfillRecord {
  return {
    id: r.id,
    operation: r.operation as Operation,
    description: r.description,
    streamKeys: Array.isArray(r.streamKeys) ? r.streamKeys.filter((k): k is string => typeof k === 'string') : [],
    maxBilledCalls: r.maxBilledCalls,
    // An unknown value (written by hand) holds the work rather than spending on it.
    control: backfillControlSchema.catch('paused').parse(r.control),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export async function loadBackfill(db: Db, id: string): Promise<BackfillRecord | null> {
  const rows = await db.select().from(b).where(eq(b.id, id));
  return rows[0] ? recordOf(rows[0]) : null;
}

/** What a worker checks before each call: the control state and the cap. */
export async function loadBackfillGate(
  db: Db,
  id: string,
): Promise<{ control: BackfillControl; maxBilledCalls: number | null } | null> {
  const rows = await db.select({ control: b.control, maxBilledCalls: b.maxBilledCalls }).from(b).where(eq(b.id, id));
  const r = rows[0];
  return r
    ? { control: backfillControlSchema.catch('paused').parse(r.control), maxBilledCalls: r.maxBilledCalls }
    : null;
}

/** The newest backfills that planned any of `streamKeys`, newest first. */
export async function backfillsOfStreams(db: Db, streamKeys: string[]): Promise<BackfillRecord[]> {
  if (streamKeys.length === 0) return [];
  const rows = await db
    .select()
    .from(b)
    .where(
      sql`${b.streamKeys} ?| array[${sql.join(
        streamKeys.map((k) => sql`${k}`),
        sql`, `,
      )}]::text[]`,
    )
    .orderBy(desc(b.createdAt), desc(b.id));
  return rows.map(recordOf);
}

/** Cancel is final: a cancelled backfill never becomes active or paused again. False when it did not apply. */
export async function setBackfillControl(db: Db, id: string, control: BackfillControl): Promise<boolean> {
  const final = control === BACKFILL_CONTROL.cancelled ? sql`true` : ne(b.control, BACKFILL_CONTROL.cancelled);
  const rows = await db
    .update(b)
    .set({ control, updatedAt: new Date() })
    .where(and(eq(b.id, id), final))
    .returning({ id: b.id });
  return rows.length === 1;
}

export async function setBackfillCap(db: Db, id: string, maxBilledCalls: number | null): Promise<void> {
  await db.update(b).set({ maxBilledCalls, updatedAt: new Date() }).where(eq(b.id, id));
}
