/**
 * What holds a stream's unfinished work for `status`: a paused backfill, a backfill at its cap, or
 * the day's budget (BILLED_CALLS_PER_DAY). Pure: the counters and the clock are arguments.
 */
import type { UnfinishedGroup } from '../db/queries/status.js';
import { BACKFILL_CONTROL } from '../domain/backfill.js';
import { isUsedUp } from '../domain/budget.js';
import { toRfc3339 } from '../domain/time.js';

export type StreamHold =
  | { kind: 'paused'; backfillId: string; partitions: number }
  | { kind: 'cancelled'; backfillId: string; partitions: number }
  | {
      kind: 'budget';
      scope: 'backfill';
      backfillId: string;
      used: number;
      cap: number;
      until: null;
      partitions: number;
    }
  | { kind: 'budget'; scope: 'day'; used: number; cap: number; until: string; partitions: number };

export interface DayBudget {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  used: number;
  /** BILLED_CALLS_PER_DAY; null: no cap. */
  cap: number | null;
  /** When the next day's budget starts. */
  untilMs: number;
}

/** Per stream key, what holds its unfinished partitions (streams held by nothing are absent). */
export function holdsByStream(groups: UnfinishedGroup[], day: DayBudget): Map<string, StreamHold[]> {
  const out = new Map<string, StreamHold[]>();
  const add = (key: string, h: StreamHold) => out.set(key, [...(out.get(key) ?? []), h]);
  const dayLeft = new Map<string, number>();
  for (const g of groups) {
    const id = g.backfillId;
    if (id !== null && g.control === BACKFILL_CONTROL.paused)
      add(g.streamKey, { kind: 'paused', backfillId: id, partitions: g.unfinished });
    else if (id !== null && g.control === BACKFILL_CONTROL.cancelled)
      add(g.streamKey, { kind: 'cancelled', backfillId: id, partitions: g.unfinished });
    else if (id !== null && isUsedUp(g.budgetUsed, g.maxBilledCalls)) {
      add(g.streamKey, {
        kind: 'budget',
        scope: 'backfill',
        backfillId: id,
        used: g.budgetUsed,
        cap: g.maxBilledCalls!,
        until: null,
        partitions: g.unfinished,
      });
    } else dayLeft.set(g.streamKey, (dayLeft.get(g.streamKey) ?? 0) + g.unfinished);
  }
  if (isUsedUp(day.used, day.cap)) {
    for (const [key, partitions] of dayLeft)
      add(key, {
        kind: 'budget',
        scope: 'day',
        used: day.used,
        cap: day.cap!,
        until: toRfc3339(day.untilMs),
        partitions,
      });
  }
  return out;
}

export function formatHold(h: StreamHold): string {
  const waiting = `${h.partitions} partition${h.partitions === 1 ? '' : 's'} waiting`;
  if (h.kind === 'paused')
    return `  paused: backfill ${h.backfillId} (${waiting}; gateway-ingest backfill resume ${h.backfillId})`;
  if (h.kind === 'cancelled')
    return `  cancelled: backfill ${h.backfillId} (${waiting}; running the same backfill again fetches them)`;
  if (h.scope === 'day')
    return (
      `  paused by budget until ${h.until}: ${h.used} of ${h.cap} billed calls ` +
      `of BILLED_CALLS_PER_DAY used today (${waiting})`
    );
  return (
    `  paused by budget until raised: backfill ${h.backfillId} used ${h.used} of ${h.cap} billed calls ` +
    `(${waiting}; gateway-ingest backfill budget ${h.backfillId} N)`
  );
}

export function formatDayBudget(d: DayBudget): string {
  if (d.cap === null)
    return `billed calls today (UTC ${d.day}): ${d.used}; no daily cap (BILLED_CALLS_PER_DAY is not set)`;
  const state = isUsedUp(d.used, d.cap)
    ? `: used up, paused by budget until ${toRfc3339(d.untilMs)}`
    : `, ${d.cap - d.used} left`;
  return `day budget (UTC ${d.day}): ${d.used} of ${d.cap} billed calls used${state}`;
}
