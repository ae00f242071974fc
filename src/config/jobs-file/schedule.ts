/** When a stream runs: a cron pattern (optionally in a time zone) or a fixed interval. */
import cronParser from 'cron-parser';
import { durationSchema } from './fields.js';
import { checkedString, fail, ok, type Check } from './field-check.js';
import type { Report, Segment } from './problem-path.js';
import { has } from './raw-document.js';
import type { Schedule } from './types.js';

/** 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first. */
function checkCronPattern(text: string): Check<string> {
  const fields = text.trim().split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5 && fields.length !== 6) {
    return fail(
      `must be a cron pattern of 5 fields (minute hour day-of-month month day-of-week) ` +
        `or 6 with seconds first, got ${fields.length} field${fields.length === 1 ? '' : 's'}`,
    );
  }
  const pattern = fields.join(' ');
  try {
    cronParser.parseExpression(pattern, { utc: true }).next();
  } catch (error) {
    return fail(`invalid cron pattern: ${error instanceof Error ? error.message : String(error)}`);
  }
  return ok(pattern);
}

/** An IANA time zone name known to this runtime's Intl, returned in its canonical spelling. */
function checkTimezone(text: string): Check<string> {
  try {
    return ok(new Intl.DateTimeFormat('en-US', { timeZone: text }).resolvedOptions().timeZone);
  } catch {
    return fail(`unknown time zone ${JSON.stringify(text)}: use an IANA name such as UTC or Europe/Berlin`);
  }
}

const cronSchema = checkedString('a cron pattern (quoted, such as "*/10 * * * *")', checkCronPattern);
const timezoneSchema = checkedString('an IANA time zone name such as UTC', checkTimezone);

/**
 * The schedule keys of a stream mapping, spread into each stream schema. Where they are spread
 * matters: a schema's key order is the order of the `allowed:` list in unknown-key messages.
 */
export const scheduleShape = () => ({
  schedule: cronSchema.optional(),
  every: durationSchema.optional(),
  timezone: timezoneSchema.optional(),
});

/** The rules that tie the schedule keys together, on the raw stream mapping. */
export function scheduleRules(item: Record<string, unknown>, base: readonly Segment[], report: Report): void {
  if (has(item, 'schedule') && has(item, 'every')) {
    report([...base, 'every'], 'set either schedule or every, not both');
  } else if (!has(item, 'schedule') && !has(item, 'every')) {
    report([...base, 'schedule'], 'required: set either schedule (a cron pattern) or every (a duration such as 10m)');
  }
  if (has(item, 'timezone') && !has(item, 'schedule')) {
    report([...base, 'timezone'], 'only applies to schedule (a cron pattern)');
  }
}

export function scheduleOf(s: {
  schedule?: string | undefined;
  every?: number | undefined;
  timezone?: string | undefined;
}): Schedule {
  const schedule: Schedule | null =
    s.schedule !== undefined
      ? { kind: 'cron', pattern: s.schedule, timezone: s.timezone ?? null }
      : s.every !== undefined
        ? { kind: 'every', everyMs: s.every }
        : null;
  if (schedule === null) throw new Error('unreachable: a stream without schedule or every passed validation');
  return schedule;
}
