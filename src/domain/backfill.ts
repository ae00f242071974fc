/**
 * A backfill: the partitions one `backfill` command planned, under one id, with a control state
 * the operator sets (pause, resume, cancel) and an optional cap on its billed calls. Whether it is
 * finished is derived from its partitions; whether it is held by a budget from its counters.
 */
import * as z from 'zod';
import { isUsedUp } from './budget.js';

export const BACKFILL_CONTROL = { active: 'active', paused: 'paused', cancelled: 'cancelled' } as const;
export const backfillControlSchema = z.enum([
  BACKFILL_CONTROL.active,
  BACKFILL_CONTROL.paused,
  BACKFILL_CONTROL.cancelled,
]);
export type BackfillControl = z.infer<typeof backfillControlSchema>;

/** `bf-20250601-3fa2`: the UTC day it was created and four random hex digits, short enough to type. */
export const BACKFILL_ID_PATTERN = /^bf-\d{8}-[0-9a-f]{4}$/;

export function newBackfillId(nowMs: number, random16: number): string {
  const day = new Date(nowMs).toISOString().slice(0, 10).replace(/-/g, '');
  return `bf-${day}-${(random16 & 0xffff).toString(16).padStart(4, '0')}`;
}

export type ControlCommand = 'pause' | 'resume' | 'cancel';

/**
 * The control state a command leads to, or why it does not apply. Cancel is final: what a cancelled
 * backfill left undone is fetched by a new backfill of the same range, which plans only what is missing.
 */
export function applyControl(
  current: BackfillControl,
  command: ControlCommand,
): { to: BackfillControl } | { refused: string } {
  if (current === BACKFILL_CONTROL.cancelled) {
    return command === 'cancel'
      ? { to: current }
      : { refused: 'it was cancelled; run the same backfill again to fetch only what is missing' };
  }
  if (command === 'pause') return { to: BACKFILL_CONTROL.paused };
  if (command === 'resume') return { to: BACKFILL_CONTROL.active };
  return { to: BACKFILL_CONTROL.cancelled };
}

/** Why waiting on a backfill stops short of its end: nothing more will run until someone acts. */
export type Halt =
  | { kind: 'paused' }
  | { kind: 'cancelled' }
  | { kind: 'budget'; scope: 'backfill'; used: number; cap: number }
  | { kind: 'budget'; scope: 'day'; used: number; cap: number; untilMs: number };

export interface BackfillSnapshot {
  control: BackfillControl;
  maxBilledCalls: number | null;
  /** Billed calls reserved by the backfill (its counter). */
  used: number;
  /** Today's counter and BILLED_CALLS_PER_DAY (null: none). */
  dayUsed: number;
  dayCap: number | null;
  /** Start of the next UTC day, when the day budget renews. */
  nextDayMs: number;
  /** A job of the backfill is running: it may still finish its partition with a call already reserved. */
  jobsRunning: boolean;
}

/**
 * Whether the backfill is held: paused or cancelled by a user, or at a budget with no job of it
 * still running (a running one may hold the last reserved call, and finish the backfill with it).
 */
export function haltOf(s: BackfillSnapshot): Halt | null {
  if (s.control === BACKFILL_CONTROL.cancelled) return { kind: 'cancelled' };
  if (s.control === BACKFILL_CONTROL.paused) return { kind: 'paused' };
  if (s.jobsRunning) return null;
  if (isUsedUp(s.used, s.maxBilledCalls))
    return { kind: 'budget', scope: 'backfill', used: s.used, cap: s.maxBilledCalls! };
  if (isUsedUp(s.dayUsed, s.dayCap))
    return { kind: 'budget', scope: 'day', used: s.dayUsed, cap: s.dayCap!, untilMs: s.nextDayMs };
  return null;
}
