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

/** A cap below 1 refuses even a first call: the scope refused before anything is written, or null. */
export function refusedOutright(scopes: BudgetScope[]): BudgetScope | null {
  return scopes.find((s) => s.cap !== null && s.cap < 1) ?? null;
}

/** The first scope a reservation did not return (it was at its cap), or null when all were reserved. */
export function firstUnreserved(scopes: BudgetScope[], reserved: Iterable<string>): BudgetScope | null {
  const got = new Set(reserved);
  return scopes.find((s) => !got.has(s.scope)) ?? null;
}

/**
 * The reserving statement, not yet run: one unit in every scope with one `insert ... on conflict do
 * update ... where calls < cap`; a counter at its cap is left as it is and not returned. A caller
 * runs it as part of a larger statement (db/audit.ts begins the attempt with it).
 */
export function reservation(db: Db | Tx, scopes: BudgetScope[]) {
  // Caps are per scope; a scope without a cap is only counted.
  const capOf = sql`(case ${c.scope} ${sql.join(
    scopes.map((s) => sql`when ${s.scope} then ${s.cap}::int`),
    sql` `,
  )} end)`;
  return db
    .insert(c)
    .values(scopes.map((s) => ({ scope: s.scope, day: s.day, calls: 1 })))
    .onConflictDoUpdate({
      target: [c.scope, c.day],
      set: { calls: sql`${c.calls} + 1` },
      setWhere: sql`${capOf} is null or ${c.calls} < ${capOf}`,
    })
    .returning({ scope: c.scope });
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
