/** Field schemas that more than one kind of stream uses, so both kinds word their rules alike. */
import { z } from 'zod';
import { isRfc3339 } from '../../gateway/time.js';
import { DURATION_RULE, parseDurationMs } from '../durations.js';
import { STREAM_NAME_PATTERN } from './constants.js';
import { checkedString, fail, ok, type Check } from './field-check.js';

export const streamNameSchema = z
  .string()
  .regex(STREAM_NAME_PATTERN, 'must be 1 to 63 letters, digits, _ . or -, starting with a letter or digit');

function checkDuration(text: string): Check<number> {
  const ms = parseDurationMs(text);
  return ms === null ? fail(`${DURATION_RULE}, got ${JSON.stringify(text)}`) : ok(ms);
}

export const durationSchema = checkedString('a duration such as 30s, 10m, 6h or 7d', checkDuration);

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` (UTC midnight) or an RFC 3339 timestamp, not after `now`. */
function checkInstant(text: string, now: Date): Check<Date> {
  let instant: Date;
  const m = DATE_ONLY.exec(text);
  if (m) {
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    instant = new Date(0);
    instant.setUTCFullYear(year, month - 1, day);
    if (instant.getUTCFullYear() !== year || instant.getUTCMonth() !== month - 1 || instant.getUTCDate() !== day) {
      return fail(`${JSON.stringify(text)} is not a calendar date`);
    }
  } else if (isRfc3339(text)) {
    instant = new Date(Date.parse(text));
  } else {
    return fail(
      'must be a date (YYYY-MM-DD, UTC midnight) or an RFC 3339 timestamp (2000-01-01T00:00:00Z), ' +
        `got ${JSON.stringify(text)}`,
    );
  }
  if (instant.getTime() > now.getTime()) {
    return fail(`must not be in the future (now is ${now.toISOString()}), got ${JSON.stringify(text)}`);
  }
  return ok(instant);
}

/** Per parse, because "the future" depends on the clock the caller passed. */
export const instantSchema = (now: Date) =>
  checkedString('a date (YYYY-MM-DD) or an RFC 3339 timestamp', (s) => checkInstant(s, now));
