/**
 * When a stream runs: a cron pattern (optionally in a time zone) or a fixed interval. Durations
 * live here because `every` is one; `lookback` borrows the same schema so both read alike.
 */
import { createRequire } from 'node:module';
import cronParser from 'cron-parser';
import { DURATION_RULE, formatDurationMs, parseDurationMs } from '../durations.js';
import { checkedString, fail, has, isRecord, ok, type Check, type Report, type Segment } from './messages.js';

// cron-parser steps through dates with luxon, whose first date asks Intl for the system's locale and
// time zone: 50 ms of every command that reads a jobs file, for values no cron pattern here depends
// on (every caller passes its zone: the pattern's own or UTC). Set on the CommonJS build, the one
// cron-parser requires (luxon's ES build is another instance).
const luxon: unknown = createRequire(import.meta.url)('luxon');
const settings = isRecord(luxon) ? luxon['Settings'] : null; // a class: its static setters take the values
if (typeof settings === 'function') {
  Reflect.set(settings, 'defaultLocale', 'en-US');
  Reflect.set(settings, 'defaultZone', 'utc');
}

export type Schedule = { kind: 'cron'; pattern: string; timezone: string | null } | { kind: 'every'; everyMs: number };

function checkDuration(text: string): Check<number> {
  const ms = parseDurationMs(text);
  return ms === null ? fail(`${DURATION_RULE}, got ${JSON.stringify(text)}`) : ok(ms);
}

const DURATION_WHAT = 'a duration such as 30s, 10m, 6h or 7d';

export const durationSchema = checkedString(DURATION_WHAT, checkDuration);

/** A duration between two bounds (both allowed); the bounds are worded as durations too. */
export function boundedDurationSchema(minMs: number, maxMs: number) {
  return checkedString(DURATION_WHAT, (text): Check<number> => {
    const parsed = checkDuration(text);
    if (!parsed.ok) return parsed;
    if (parsed.value < minMs) return fail(`must be at least ${formatDurationMs(minMs)}, got ${JSON.stringify(text)}`);
    if (parsed.value > maxMs) return fail(`must be at most ${formatDurationMs(maxMs)}, got ${JSON.stringify(text)}`);
    return parsed;
  });
}

/** 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first. */
function checkCronPattern(text: string): Check<string> {
  const fields = text
    .trim()
    .split(/\s+/)
    .filter((f) => f !== '');
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

/**
 * The rules that tie the schedule keys together, on the raw stream mapping. `refresh`: the mapping
 * may set refresh tiers instead (an earthquake stream), so the message names that way too.
 */
export function scheduleRules(
  item: Record<string, unknown>,
  base: readonly Segment[],
  report: Report,
  ways: { refresh: boolean } = { refresh: false },
): void {
  if (has(item, 'schedule') && has(item, 'every')) {
    report([...base, 'every'], 'set either schedule or every, not both');
  } else if (!has(item, 'schedule') && !has(item, 'every')) {
    const message = ways.refresh
      ? 'required: set schedule (a cron pattern), every (a duration such as 10m), or refresh (tiers of within and ' +
        'schedule or every, see docs/jobs-yaml.md "Tiered refresh")'
      : 'required: set either schedule (a cron pattern) or every (a duration such as 10m)';
    report([...base, 'schedule'], message);
  }
  if (has(item, 'timezone') && !has(item, 'schedule')) {
    report([...base, 'timezone'], 'only applies to schedule (a cron pattern)');
  }
}

/** The resolved schedule of a validated stream: `scheduleRules` made sure exactly one kind is set. */
export function scheduleOf(s: {
  schedule?: string | undefined;
  every?: number | undefined;
  timezone?: string | undefined;
}): Schedule {
  if (s.schedule !== undefined) return { kind: 'cron', pattern: s.schedule, timezone: s.timezone ?? null };
  if (s.every !== undefined) return { kind: 'every', everyMs: s.every };
  throw new Error('unreachable: a stream without schedule or every passed validation');
}
