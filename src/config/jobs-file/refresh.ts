/**
 * Tiered refresh of an earthquake stream: recent events are re-read often, older ones rarely, because
 * the catalog revises (and deletes) events mostly in their first days. Each tier re-reads a band of
 * event ages, from where the tier before it ends up to its own `within`, on its own schedule.
 *
 * The schema holds the per-field rules; `refreshRules` holds the rules that tie keys together (run on
 * the raw document, like every other cross-field rule, so one bad tier never hides another problem).
 */
import * as z from 'zod';
import { DAY_MS } from '../../domain/time.js';
import { DURATION_UNITS_MS } from '../durations.js';
import { formatPath, has, isRecord, type Report, type Segment } from './messages.js';
import { boundedDurationSchema, scheduleOf, scheduleRules, scheduleShape, type Schedule } from './schedule.js';

export interface RefreshTier {
  /** Events up to this age are re-read by this tier, from where the tier before it ends (0 for the first). */
  withinMs: number;
  /** Where this tier's band starts: the previous tier's withinMs, 0 for the first. */
  fromMs: number;
  schedule: Schedule;
}

export const REFRESH_LIMITS = {
  /** Each tier is a job scheduler of its own; a handful is all a catalog's life needs. */
  maxTiers: 8,
  /** Shorter bands would re-read less than a tick's own jitter. */
  minWithinMs: DURATION_UNITS_MS.m,
  /** A year and a day: older events are history, which `backfill --refresh` re-reads on demand. */
  maxWithinMs: 366 * DAY_MS,
} as const;

const withinSchema = boundedDurationSchema(REFRESH_LIMITS.minWithinMs, REFRESH_LIMITS.maxWithinMs);

/** `within` first: the order of the `allowed:` list in unknown-key messages. */
export const refreshTierSchema = z.strictObject({
  within: withinSchema,
  ...scheduleShape(),
});

export const refreshSchema = z.array(refreshTierSchema).min(1).max(REFRESH_LIMITS.maxTiers);

/** The stream keys a refresh list replaces, and why, for the message naming both keys. */
const REPLACED_BY_REFRESH = {
  schedule: 'with refresh, each tier has its own schedule or every',
  every: 'with refresh, each tier has its own schedule or every',
  lookback: "with refresh, the last tier's within is how far back the stream re-reads",
} as const;

/**
 * The rules of a stream that sets `refresh` (instead of `scheduleRules`): no stream-level schedule,
 * every or lookback, a schedule per tier, and `within` growing from tier to tier.
 */
export function refreshRules(item: Record<string, unknown>, base: readonly Segment[], report: Report): void {
  for (const [key, why] of Object.entries(REPLACED_BY_REFRESH)) {
    if (has(item, key)) report([...base, key], `set either refresh or ${key}, not both: ${why}`);
  }
  // With a stream-level schedule the conflict above is the problem; alone, timezone has nothing to apply to.
  if (has(item, 'timezone') && !has(item, 'schedule')) {
    report(
      [...base, 'timezone'],
      'only applies to schedule (a cron pattern): with refresh, set timezone on the tiers that have a schedule',
    );
  }
  const tiers = item.refresh;
  if (!Array.isArray(tiers)) return; // a value of the wrong type is the schema's problem
  let previous: { index: number; ms: number; text: string } | null = null;
  tiers.forEach((tier: unknown, j) => {
    if (!isRecord(tier)) return;
    const path: Segment[] = [...base, 'refresh', j];
    scheduleRules(tier, path, report);
    // Only withins the schema accepts are compared, so a bad one is reported once, by the schema.
    const within = withinSchema.safeParse(tier.within);
    if (!within.success) return;
    const text = String(tier.within);
    if (previous !== null && within.data <= previous.ms) {
      const before = `${formatPath(['refresh', previous.index, 'within'])}: ${previous.text}`;
      report([...path, 'within'], `must be longer than the tier before it (${before}), got ${JSON.stringify(text)}`);
    }
    previous = { index: j, ms: within.data, text };
  });
}

/** The tiers of a validated stream, each starting where the one before it ends. */
export function resolveRefresh(tiers: z.output<typeof refreshSchema>): RefreshTier[] {
  return tiers.map((tier, j) => ({
    withinMs: tier.within,
    fromMs: j === 0 ? 0 : tiers[j - 1]!.within,
    schedule: scheduleOf(tier),
  }));
}
