/**
 * Billed-call budgets: which counters a call reserves a unit in, and what a refusal means. Pure;
 * the counters live in `budget_counters` (db/budget.ts), where every worker sees them.
 *
 * Both scopes are counted whether or not a cap is set, so that a cap set later (or a day cap that
 * only some processes know) is measured against everything already spent.
 */
import { DAY_MS } from './time.js';

/** BILLED_CALLS_PER_DAY: one counter per UTC day. */
export const DAY_SCOPE = 'day';
/** A backfill's counter has no day: it is stored under this fixed date. */
export const BACKFILL_BUDGET_DAY = '1970-01-01';
/** How often a job held by a budget looks again, so that a raised cap resumes it soon. */
export const BUDGET_RECHECK_MS = 60_000;

export function backfillScope(backfillId: string): string {
  return `backfill:${backfillId}`;
}

/** One counter a call must reserve a unit in; `cap` null: counted, not limited. */
export interface BudgetScope {
  scope: string;
  /** YYYY-MM-DD. */
  day: string;
  cap: number | null;
}

/** YYYY-MM-DD of the UTC day holding `ms`. */
export function utcDayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The first instant of the next UTC day. */
export function nextUtcMidnightMs(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

/**
 * The counters a call reserves in: today's, and its backfill's when it belongs to one. Day first
 * (a fixed lock order).
 */
/** A backfill's own counter (its cap is read where the unit is reserved). */
export function backfillBudgetScope(backfillId: string, cap: number | null = null): BudgetScope {
  return { scope: backfillScope(backfillId), day: BACKFILL_BUDGET_DAY, cap };
}

export function budgetScopes(
  nowMs: number,
  dayCap: number | null,
  backfill: { id: string; maxBilledCalls: number | null } | null,
): BudgetScope[] {
  const scopes: BudgetScope[] = [{ scope: DAY_SCOPE, day: utcDayOf(nowMs), cap: dayCap }];
  if (backfill) scopes.push(backfillBudgetScope(backfill.id, backfill.maxBilledCalls));
  return scopes;
}

/** Why a reservation was refused: the day's cap (until the next UTC midnight) or a backfill's (until raised). */
export type BudgetRefusal =
  | { scope: 'day'; cap: number; untilMs: number }
  | { scope: 'backfill'; backfillId: string; cap: number; untilMs: null };

export function refusalOf(refused: BudgetScope, nowMs: number): BudgetRefusal {
  const cap = refused.cap ?? 0;
  if (refused.scope === DAY_SCOPE) return { scope: 'day', cap, untilMs: nextUtcMidnightMs(nowMs) };
  return { scope: 'backfill', backfillId: refused.scope.slice('backfill:'.length), cap, untilMs: null };
}

/**
 * How long a job held by a budget waits before it looks again: never past the moment the budget
 * renews, and never longer than `recheckMs`, so that a cap raised meanwhile resumes it soon.
 */
export function budgetRecheckDelayMs(untilMs: number | null, nowMs: number, recheckMs = BUDGET_RECHECK_MS): number {
  if (untilMs === null) return recheckMs;
  return Math.max(0, Math.min(recheckMs, untilMs - nowMs));
}

/** True when `used` calls leave nothing under `cap` (null: no cap). */
export function isUsedUp(used: number, cap: number | null): boolean {
  return cap !== null && used >= cap;
}
