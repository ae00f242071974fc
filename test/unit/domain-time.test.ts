import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalTime,
  currentYearEverywhere,
  INSTANT_FORMS,
  isRfc3339,
  parseInstant,
  parseRfc3339,
  reportedPrecisionMs,
  toRfc3339,
} from '../../src/domain/time.js';

const utc = (iso: string): number => Date.parse(iso);
/** Every instant RFC 3339 can write with a four-digit year, in whole milliseconds. */
const instantMs = fc.integer({ min: utc('0000-01-01T00:00:00Z'), max: utc('9999-12-31T23:59:59.999Z') });
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `ms` written in the local time of a numeric offset, as another system would send it. */
function withOffset(ms: number, offsetMinutes: number): string {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function parsedMs(text: string): number {
  const parsed = parseInstant(text);
  if (!parsed.ok) throw new Error(`refused ${text}: ${parsed.problem}`);
  return parsed.ms;
}

describe('parseInstant', () => {
  it('reads back every instant toRfc3339 writes', () => {
    fc.assert(fc.property(instantMs, (ms) => parsedMs(toRfc3339(ms)) === ms));
  });

  it('reads a numeric offset as the same instant in UTC', () => {
    const offset = fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 });
    const inside = fc.integer({ min: utc('0001-01-02T00:00:00Z'), max: utc('9998-12-30T00:00:00Z') });
    fc.assert(fc.property(inside, offset, (ms, minutes) => parsedMs(withOffset(ms, minutes)) === ms));
  });

  it('reads every real calendar date as its UTC midnight, years 0-99 included', () => {
    fc.assert(
      fc.property(instantMs, (ms) => {
        const day = toRfc3339(ms).slice(0, 10);
        return parsedMs(day) === utc(`${day}T00:00:00Z`) && toRfc3339(parsedMs(day)).startsWith(day);
      }),
    );
    expect(toRfc3339(parsedMs('0050-03-01'))).toBe('0050-03-01T00:00:00Z');
  });

  it('refuses any day past the end of its month', () => {
    const month = fc.record({ year: fc.integer({ min: 0, max: 9999 }), month: fc.integer({ min: 1, max: 12 }) });
    fc.assert(
      fc.property(month, fc.integer({ min: 1, max: 10 }), ({ year, month: m }, past) => {
        const days = new Date(Date.UTC(2000, m, 0)).getUTCDate() - (m === 2 && !isLeap(year) ? 1 : 0);
        const text = `${pad(year, 4)}-${pad(m)}-${pad(days + past)}`;
        return !parseInstant(text).ok;
      }),
    );
  });

  it('takes leap days only in leap years', () => {
    expect(parsedMs('2024-02-29')).toBe(utc('2024-02-29T00:00:00Z'));
    expect(parsedMs('2000-02-29T12:00:00Z')).toBe(utc('2000-02-29T12:00:00Z'));
    for (const text of ['2023-02-29', '1900-02-29', '2100-02-29T00:00:00Z']) expect(parseInstant(text).ok).toBe(false);
  });

  it('takes fractions of a second, lower-case t and z, and UTC midnight', () => {
    expect(parsedMs('2025-01-01T00:00:00.5Z')).toBe(utc('2025-01-01T00:00:00.500Z'));
    expect(parsedMs('2025-01-01T00:00:00.123456789Z')).toBe(utc('2025-01-01T00:00:00.123Z'));
    expect(parsedMs('2025-01-01T00:00:00.9876543210123Z')).toBe(utc('2025-01-01T00:00:00.987Z'));
    expect(parsedMs('2025-01-01t06:00:00z')).toBe(utc('2025-01-01T06:00:00Z'));
    expect(parsedMs('2015-01-01T06:00:00+02:00')).toBe(utc('2015-01-01T04:00:00Z'));
  });

  it('reads a leap second, in UTC or at an offset, as the next second begun, as PostgreSQL does', () => {
    expect(parsedMs('2016-12-31T23:59:60Z')).toBe(utc('2017-01-01T00:00:00Z'));
    expect(parsedMs('2017-01-01T08:59:60.25+09:00')).toBe(utc('2017-01-01T00:00:00.250Z'));
    expect(parsedMs('2015-06-30t18:59:60.9999999-05:00')).toBe(utc('2015-07-01T00:00:00.999Z'));
    expect(parsedMs('1972-06-30T23:59:60Z')).toBe(utc('1972-07-01T00:00:00Z'));
  });

  it.each(['2016-12-30T23:59:60Z', '2016-12-31T22:59:60Z', '2016-12-31T23:59:60+01:00', '2025-12-31T23:59:60Z'])(
    'refuses second 60 off a leap second: %j',
    (text) => {
      expect(parseInstant(text).ok).toBe(false);
      expect(isRfc3339(text)).toBe(false);
    },
  );

  it.each([
    '',
    'yesterday',
    '2025-01-01 10:00',
    '2025-01-01T10:00',
    '20250101T000000Z',
    '2025-1-01',
    '25-01-01',
    '2025-01-01T24:00:00Z',
    '2025-01-01T00:60:00Z',
    '2025-01-01T00:00:60Z',
    '2025-01-01T00:00:00+24:00',
    '2025-01-01T00:00:00+02:60',
    '2025-01-01T00:00:00+0200',
    '2025-01-01T00:00:00.Z',
    ' 2025-01-01',
    '2025-01-01Z',
  ])('refuses %j, naming the forms it takes', (text) => {
    expect(parseInstant(text)).toEqual({ ok: false, problem: `must be ${INSTANT_FORMS}, got ${JSON.stringify(text)}` });
  });

  it.each([
    ['2025-05-01T12:00:00', 'it has no time zone: add Z for UTC (2025-05-01T12:00:00Z) or an offset such as +02:00'],
    ['2025-05-01 12:00:00Z', 'put T between the date and the time (2025-05-01T12:00:00Z)'],
    [
      '2025-05-01 12:00:00',
      'put T between the date and the time and add Z for UTC (2025-05-01T12:00:00Z) or an offset',
    ],
  ])('says what %j lacks', (text, hint) => {
    expect(parseInstant(text)).toEqual({
      ok: false,
      problem: `must be ${INSTANT_FORMS}, got ${JSON.stringify(text)}: ${hint}`,
    });
  });

  it.each(['2025-02-31', '2025-13-01', '2025-00-10', '2025-04-31', '2025-01-00'])(
    'says %j is not a calendar date',
    (text) => {
      expect(parseInstant(text)).toEqual({ ok: false, problem: `${JSON.stringify(text)} is not a calendar date` });
    },
  );

  it('agrees with parseRfc3339 on timestamps', () => {
    fc.assert(fc.property(instantMs, (ms) => parseRfc3339(toRfc3339(ms)) === parsedMs(toRfc3339(ms))));
    expect(parseRfc3339('2025-01-01')).toBeNull();
  });
});

describe('reportedPrecisionMs', () => {
  it('is the coarsest unit up to a day of which every time is a whole multiple, else a second', () => {
    const minute = utc('2025-05-06T09:24:00Z');
    expect(reportedPrecisionMs([minute, minute + 3_600_000, utc('1969-12-31T23:59:00Z')])).toBe(60_000);
    expect(reportedPrecisionMs([minute, minute + 1_000])).toBe(1_000);
    expect(reportedPrecisionMs([minute + 10_000, minute + 50_000])).toBe(10_000);
    expect(reportedPrecisionMs([utc('2025-05-06T09:00:00Z'), utc('2025-05-07T23:00:00Z')])).toBe(3_600_000);
    expect(reportedPrecisionMs([utc('2025-05-06T00:00:00Z'), utc('1969-12-30T00:00:00Z')])).toBe(86_400_000);
    expect(reportedPrecisionMs([minute + 0.5])).toBe(1_000);
    expect(reportedPrecisionMs([])).toBe(1_000);
  });
});

describe('canonicalTime', () => {
  const offsetMinutes = fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 });
  const moreDigits = fc.stringMatching(/^\d{0,12}$/);
  /** A day inside either end of four-digit years, so that its local time at any offset is one. */
  const inner = fc.integer({ min: utc('0000-01-02T00:00:00Z'), max: utc('9999-12-30T23:59:59.999Z') });

  it('writes any form of an instant as toRfc3339 does, whatever digits follow its milliseconds', () => {
    fc.assert(
      fc.property(inner, offsetMinutes, moreDigits, fc.boolean(), (ms, offset, digits, lower) => {
        const written = withOffset(ms, offset).replace(/([+-]\d{2}:\d{2})$/, `${digits}$1`);
        const text = lower ? written.toLowerCase() : written;
        return parseRfc3339(text) === ms && canonicalTime(text) === toRfc3339(ms);
      }),
      { numRuns: 5_000 },
    );
  });

  it('keeps a time already in that form as it is, and reads what V8 misreads', () => {
    for (const time of ['2025-05-10T03:53:36.064Z', '2025-05-10T03:53:36Z']) expect(canonicalTime(time)).toBe(time);
    // Date.parse reads this as 03:53:36.644: ten fraction digits or more lose their leading zeros.
    expect(canonicalTime('2025-05-10t09:23:36.064456789012+05:30')).toBe('2025-05-10T03:53:36.064Z');
    expect(canonicalTime('2016-12-31T23:59:60.5Z')).toBe('2017-01-01T00:00:00.500Z');
  });
});

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The days that ended with a leap second, as IERS lists them. */
const LEAP_DAYS = [
  ...['1972-06-30', '1981-06-30', '1982-06-30', '1983-06-30', '1985-06-30', '1992-06-30', '1993-06-30'],
  ...['1994-06-30', '1997-06-30', '2012-06-30', '2015-06-30'],
  ...[1972, 1973, 1974, 1975, 1976, 1977, 1978, 1979, 1987, 1989, 1990, 1995, 1998, 2005, 2008, 2016].map(
    (y) => `${y}-12-31`,
  ),
];

describe('isRfc3339, read by character codes', () => {
  /** The grammar with every field captured and checked as numbers: what the fast check must agree with. */
  function reference(value: string): boolean {
    const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(
      value,
    );
    if (!m) return false;
    const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map(Number);
    const probe = new Date(Date.UTC(2000, month - 1, 1));
    probe.setUTCFullYear(year, month - 1, day);
    const realDay = month >= 1 && month <= 12 && day >= 1 && probe.getUTCDate() === day;
    if (!realDay || hour > 23 || minute > 59 || second > 60) return false;
    if (m[7] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false;
    if (second < 60) return true;
    // Second 60 only as the 61st second of a day that had one, in UTC.
    const offsetMinutes = m[7] === undefined ? 0 : (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
    probe.setUTCHours(hour, minute - offsetMinutes, 59);
    return (
      probe.getUTCHours() === 23 && probe.getUTCMinutes() === 59 && LEAP_DAYS.includes(probe.toISOString().slice(0, 10))
    );
  }
  const digits = (width: number) => fc.integer({ min: 0, max: 10 ** width - 1 }).map((n) => pad(n, width));
  const candidate = fc
    .tuple(
      digits(4),
      digits(2),
      digits(2),
      fc.constantFrom('T', 't', ' '),
      digits(2),
      digits(2),
      digits(2),
      fc.constantFrom('', '.5', '.123456789', '.1234567890123', '.'),
      fc.oneof(fc.constantFrom('Z', 'z', ''), fc.tuple(fc.constantFrom('+', '-'), digits(2), digits(2))),
    )
    .map(
      ([y, mo, d, t, h, mi, s, f, z]) =>
        `${y}-${mo}-${d}${t}${h}:${mi}:${s}${f}${Array.isArray(z) ? `${z[0]}${z[1]}:${z[2]}` : z}`,
    );

  it('agrees with the captured grammar on generated timestamps, valid and not', () => {
    fc.assert(
      fc.property(candidate, (value) => isRfc3339(value) === reference(value)),
      { numRuns: 20_000 },
    );
  });

  const nearLeapSecond = fc
    .tuple(
      fc.constantFrom(...LEAP_DAYS),
      fc.integer({ min: -1, max: 1 }),
      fc.constantFrom('23:59', '22:59', '00:59', '08:59', '18:59', '05:29', '23:58'),
      fc.constantFrom('', '.5', '.1234567890123'),
      fc.constantFrom('Z', 'z', '+01:00', '-05:00', '+09:00', '+05:30', '-00:00'),
    )
    .map(([day, shift, hm, f, z]) => {
      const d = new Date(Date.parse(`${day}T00:00:00Z`) + shift * 86_400_000).toISOString().slice(0, 10);
      return `${d}T${hm}:60${f}${z}`;
    });

  it('takes second 60 exactly where a leap second was, at any offset', () => {
    fc.assert(fc.property(nearLeapSecond, (value) => isRfc3339(value) === reference(value)));
    expect(LEAP_DAYS).toHaveLength(27);
  });

  it('knows leap days and the ends of months', () => {
    expect(isRfc3339('2024-02-29T00:00:00Z')).toBe(true);
    expect(isRfc3339('2025-02-29T00:00:00Z')).toBe(false);
    expect(isRfc3339('1900-02-29T00:00:00Z')).toBe(false);
    expect(isRfc3339('2000-02-29T23:59:59.999+23:59')).toBe(true);
    expect(isRfc3339('2025-04-31T00:00:00Z')).toBe(false);
    expect(isRfc3339('2025-04-30T24:00:00Z')).toBe(false);
    expect(isRfc3339('2025-04-30T12:00:00+24:00')).toBe(false);
  });
});

describe('currentYearEverywhere', () => {
  it('stays on the old year through the first UTC day of the new one, then turns', () => {
    expect(currentYearEverywhere(Date.parse('2026-12-31T23:59:59Z'))).toBe(2026);
    expect(currentYearEverywhere(Date.parse('2027-01-01T00:00:00Z'))).toBe(2026);
    // UTC-12 reaches the new year at 12:00 UTC; a day's margin covers a gateway clock up to 12 hours slow too.
    expect(currentYearEverywhere(Date.parse('2027-01-01T23:59:59.999Z'))).toBe(2026);
    expect(currentYearEverywhere(Date.parse('2027-01-02T00:00:00Z'))).toBe(2027);
  });

  it('is never after the year of any time zone, and never more than a year behind UTC', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('1970-01-02T00:00:00Z'), max: Date.parse('2200-01-01T00:00:00Z') }),
        (ms) => {
          const year = currentYearEverywhere(ms);
          const westmost = new Date(ms - 12 * 3_600_000).getUTCFullYear();
          expect(year).toBeLessThanOrEqual(westmost);
          expect(year).toBeGreaterThanOrEqual(new Date(ms).getUTCFullYear() - 1);
        },
      ),
    );
  });
});
