/**
 * Instants as the product handles them: epoch milliseconds inside, RFC 3339 on the wire.
 * Parsing, calendar checks and second arithmetic come from date-fns; the RFC 3339 grammar is
 * checked here because date-fns also accepts ISO 8601 forms the spec does not (`20250101T000000Z`).
 * Day arithmetic stays in plain milliseconds: date-fns' addDays follows local DST changes.
 */
// One subpath per function: the package index is hundreds of modules, 0.8 s to load on Node 22.
import { addSeconds } from 'date-fns/addSeconds';
import { getDaysInMonth } from 'date-fns/getDaysInMonth';
import { parseISO } from 'date-fns/parseISO';
import { startOfSecond } from 'date-fns/startOfSecond';

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

// Tested without captures: every event of every answer passes here, and a match array per event is most of its cost.
// A fraction may have any number of digits (RFC 3339 `time-secfrac`); instants keep milliseconds.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date, so 2025-02-31 is refused (Date would roll it over to March). */
function realDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

/** Days of each month asked so far, by year * 12 + month: an answer's events share a few months. */
const monthDays = new Map<number, number>();

function daysInMonth(year: number, month: number): number {
  const key = year * 12 + month;
  let days = monthDays.get(key);
  if (days === undefined) {
    // getDaysInMonth reads local fields, so the probe date is built from local fields too (and
    // setFullYear, since the Date constructor reads years 0-99 as 1900-1999).
    const probe = new Date(2000, month - 1, 1);
    probe.setFullYear(year);
    days = getDaysInMonth(probe);
    if (monthDays.size < 10_000) monthDays.set(key, days);
  }
  return days;
}

/** The number written by the two digits at `at`, `value` already matched by RFC3339. */
const twoDigits = (value: string, at: number): number =>
  (value.charCodeAt(at) - 48) * 10 + value.charCodeAt(at + 1) - 48;

/**
 * RFC 3339 timestamp with a `Z` or numeric offset; fractional seconds allowed. Checked field by
 * field (every event of every answer passes here: a full parse would cost a tenth of a worker's time).
 */
export function isRfc3339(value: string): boolean {
  if (!RFC3339.test(value)) return false;
  const year = twoDigits(value, 0) * 100 + twoDigits(value, 2);
  if (!realDate(year, twoDigits(value, 5), twoDigits(value, 8))) return false;
  if (twoDigits(value, 11) > 23 || twoDigits(value, 14) > 59 || twoDigits(value, 17) > 60) return false;
  const zulu = value.charCodeAt(value.length - 1) === 90 || value.charCodeAt(value.length - 1) === 122;
  const offset = zulu || (twoDigits(value, value.length - 5) <= 23 && twoDigits(value, value.length - 2) <= 59);
  return offset && (twoDigits(value, 17) < 60 || leapSecondMs(value) !== null);
}

/**
 * UTC days that ended with a 61st second, 23:59:60 (IERS Bulletin C): RFC 3339 allows second 60
 * only there. None has been inserted since; one announced later is refused until it is listed.
 */
// prettier-ignore
const LEAP_SECOND_DAYS = new Set([
  '1972-06-30', '1972-12-31', '1973-12-31', '1974-12-31', '1975-12-31', '1976-12-31', '1977-12-31',
  '1978-12-31', '1979-12-31', '1981-06-30', '1982-06-30', '1983-06-30', '1985-06-30', '1987-12-31',
  '1989-12-31', '1990-12-31', '1992-06-30', '1993-06-30', '1994-06-30', '1995-12-31', '1997-06-30',
  '1998-12-31', '2005-12-31', '2008-12-31', '2012-06-30', '2015-06-30', '2016-12-31',
]);

/**
 * Epoch ms of a timestamp matched by RFC3339, `second` written in place of its seconds: its whole
 * seconds read by date-fns, its fraction cut to whole milliseconds from the digits themselves (a
 * fraction read as a float may land a millisecond low, and V8's Date.parse misreads ten digits or
 * more: `.0644567890` as .644).
 */
function epochMs(value: string, second: string): number {
  const rest = value.slice(19);
  const zoneAt = rest.search(/[Zz+-]/);
  const wholeMs = parseISO(`${value.slice(0, 17)}${second}${rest.slice(zoneAt)}`.toUpperCase()).getTime();
  return wholeMs + Number(`${rest.slice(1, zoneAt)}000`.slice(0, 3));
}

/**
 * Epoch ms of a timestamp written in a leap second (second 60, in UTC or at an offset), read as
 * PostgreSQL reads it: the same fraction into the next second, so that every stored time is an
 * instant of the epoch. Null when second 60 does not fall on a leap second.
 */
function leapSecondMs(value: string): number | null {
  const ms = epochMs(value, '59');
  const utc = new Date(ms).toISOString();
  return utc.slice(11, 19) === '23:59:59' && LEAP_SECOND_DAYS.has(utc.slice(0, 10)) ? ms + SECOND_MS : null;
}

/** Epoch ms of an RFC 3339 timestamp, or null when it is not one. */
export function parseRfc3339(value: string): number | null {
  if (!isRfc3339(value)) return null;
  return twoDigits(value, 17) === 60 ? leapSecondMs(value) : epochMs(value, value.slice(17, 19));
}

/** As toISOString writes an instant, or without its fraction: the form Date.parse reads as ECMAScript defines it. */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;

/**
 * An RFC 3339 timestamp in the form every later step may read with Date.parse: as written when it
 * is in that form already (what a gateway passing on the catalog sends), else as `toRfc3339` writes
 * its instant (`parseRfc3339`). Other forms are left to each engine, and V8 misreads some of them.
 */
export function canonicalTime(value: string): string {
  if (CANONICAL.test(value) && twoDigits(value, 17) < 60) return value;
  const ms = parseRfc3339(value);
  return ms === null ? value : toRfc3339(ms);
}

/** `YYYY-MM-DD` as UTC midnight, or null when it is not a real calendar date. */
function parseDateOnly(value: string): number | null {
  const m = DATE_ONLY.exec(value);
  if (!m) return null;
  const [year, month, day] = m.slice(1, 4).map(Number) as [number, number, number];
  if (!realDate(year, month, day)) return null;
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear does not.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getTime();
}

/** The forms an instant a person writes (a CLI flag, a jobs.yaml key) may take, for messages. */
export const INSTANT_FORMS = 'a date (YYYY-MM-DD, UTC midnight) or an RFC 3339 timestamp (2000-01-01T00:00:00Z)';

export type ParsedInstant = { ok: true; ms: number } | { ok: false; problem: string };

/**
 * The one rule for instants a person writes: a date (`YYYY-MM-DD`, UTC midnight, a real calendar
 * date) or an RFC 3339 timestamp (`Z` or a numeric offset). `problem` repeats the text given but
 * names no source: the caller puts the flag or the key in front of it.
 */
export function parseInstant(text: string): ParsedInstant {
  if (DATE_ONLY.test(text)) {
    const ms = parseDateOnly(text);
    return ms === null ? { ok: false, problem: `${JSON.stringify(text)} is not a calendar date` } : { ok: true, ms };
  }
  const ms = parseRfc3339(text);
  if (ms !== null) return { ok: true, ms };
  const hint = instantHint(text);
  return { ok: false, problem: `must be ${INSTANT_FORMS}, got ${JSON.stringify(text)}${hint ? `: ${hint}` : ''}` };
}

/** What is missing from an instant that is nearly RFC 3339: the offset, or the `T`. */
function instantHint(text: string): string | null {
  if (parseRfc3339(`${text}Z`) !== null)
    return `it has no time zone: add Z for UTC (${text}Z) or an offset such as +02:00`;
  const withT = text.replace(' ', 'T');
  if (withT !== text && parseRfc3339(withT) !== null) return `put T between the date and the time (${withT})`;
  if (withT !== text && parseRfc3339(`${withT}Z`) !== null)
    return `put T between the date and the time and add Z for UTC (${withT}Z) or an offset`;
  return null;
}

/** Canonical wire form: UTC, millisecond precision only when it is not zero. */
export function toRfc3339(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** The units a gateway may report times in, coarsest first (the spec gives no precision). */
const REPORTED_UNITS_MS = [
  ...[24, 12, 6, 3, 2, 1].map((h) => h * 60 * MINUTE_MS),
  ...[30, 15, 10, 5, 1].map((m) => m * MINUTE_MS),
  ...[30, 15, 10, 5, 2, 1].map((s) => s * SECOND_MS),
];

/**
 * How far the reported times `timesMs` of one answer may lie from the true times the gateway
 * filtered on: the coarsest unit, up to a day, of which every one is a whole multiple (a gateway
 * reporting that unit, truncated, rounded or up), else a second (whole seconds, or finer). Of one
 * stored time, how far it may lie from the true one: a second-precision time that happens to be a
 * whole hour is given an hour, which only widens what is asked about it.
 */
export function reportedPrecisionMs(timesMs: readonly number[]): number {
  if (timesMs.length === 0) return SECOND_MS;
  return REPORTED_UNITS_MS.find((unit) => timesMs.every((t) => t % unit === 0)) ?? SECOND_MS;
}

/** The whole second at or before `ms`. */
export function floorSecond(ms: number): number {
  return startOfSecond(ms).getTime();
}

/** Whole second strictly after `ms`. */
export function secondAfter(ms: number): number {
  return addSeconds(startOfSecond(ms), 1).getTime();
}

/** Whole second strictly before `ms`. */
export function secondBefore(ms: number): number {
  const floor = startOfSecond(ms).getTime();
  return floor < ms ? floor : addSeconds(floor, -1).getTime();
}

/**
 * The year it is at `nowMs` on every clock the gateway may read: the spec's "current year" is the
 * gateway's, in a time zone it does not give (UTC-12 is still in the old year 12 hours into the
 * new one in UTC), on a clock that may be slow. So a day of margin: nothing is published for a year
 * on its first day, and an end year past the gateway's current year fails the call for good.
 */
export function currentYearEverywhere(nowMs: number): number {
  return new Date(nowMs - DAY_MS).getUTCFullYear();
}

/**
 * How far behind ours the gateway's clock may be when it judges "not in the future": a request
 * starting later than this before now may be refused for that alone, and is asked again later
 * rather than failed.
 */
export const GATEWAY_CLOCK_SLACK_MS = 60 * MINUTE_MS;
