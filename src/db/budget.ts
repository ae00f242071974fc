/**
 * The billed-call counters (`budget_counters`), shared by every worker. A unit is reserved before a
 * call is sent and given back when the answer turns out unbilled; each write is one statement, so
 * concurrent workers can never together go past a cap.
 */
import { and, eq, gt, or, sql } from 'drizzle-orm';
import type { BudgetScope } from '../domain/budget.js';
import type { Db, Tx } from './connection.js';
import { budgetCounters as c } from './schema.js';

export type ReservedScope = Pick<BudgetScope, 'scope' | 'day'>;

/** The first scope a reservation did not return (it was at its cap), or null when all were reserved. */
export function firstUnreserved(scopes: BudgetScope[], reserved: Iterable<string>): BudgetScope | null {
  const got = new Set(reserved);
  return scopes.find((s) => !got.has(s.scope)) ?? null;
}

/** Gives back the units of a call that turned out unbilled (never below zero). */
export async function releaseBudget(db: Db | Tx, scopes: ReservedScope[]): Promise<void> {
  if (scopes.length === 0) return;
  await db
    .update(c)
    .set({ calls: sql`${c.calls} - 1` })
    .where(and(gt(c.calls, 0), or(...scopes.map((s) => and(eq(c.scope, s.scope), eq(c.day, s.day))))));
}

/** The units reserved in one counter (0 when it was never used). */
export async function budgetUsed(db: Db, scope: ReservedScope): Promise<number> {
  const rows = await db
    .select({ calls: c.calls })
    .from(c)
    .where(and(eq(c.scope, scope.scope), eq(c.day, scope.day)));
  return rows[0]?.calls ?? 0;
}
