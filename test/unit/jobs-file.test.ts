import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobsFileError, loadJobsFile, parseDurationMs, parseJobsFile } from '../../src/config/jobs-file.js';
import { eq, NOW, now, parse, problems } from '../support/jobs-yaml.js';
import { formatDurationMs } from '../../src/config/durations.js';
import { UsageError } from '../../src/errors.js';

const fixture = (name: string) => join(import.meta.dirname, '../fixtures/jobs', name);
const DAY = 86_400_000;

const ind = (...lines: string[]) =>
  ['indicators:', '  - name: macro', ...lines.map((l) => `    ${l}`)].join('\n') + '\n';
const IND_OK = ['indicators: [NY.GDP.MKTP.CD]', 'countries: [US]', 'schedule: "0 4 * * 1"'];

const GLOBAL_SCHEDULE = { kind: 'cron', pattern: '*/10 * * * *', timezone: null } as const;
const CALIFORNIA_SCHEDULE = { kind: 'cron', pattern: '*/5 * * * *', timezone: null } as const;

const EXPECTED_EXAMPLE = {
  earthquakes: [
    {
      name: 'global-m2_5',
      minMagnitude: 2.5,
      circle: null,
      schedule: GLOBAL_SCHEDULE,
      lookbackMs: 7 * DAY,
      // Without refresh: one tier, the stream's schedule over its lookback.
      refresh: [{ withinMs: 7 * DAY, fromMs: 0, schedule: GLOBAL_SCHEDULE }],
      backfillFrom: new Date('2000-01-01T00:00:00Z'),
      enabled: true,
    },
    {
      name: 'california',
      minMagnitude: null,
      circle: { latitude: 36.7, longitude: -119.4, radiusKm: 400 },
      schedule: CALIFORNIA_SCHEDULE,
      lookbackMs: 2 * DAY,
      refresh: [{ withinMs: 2 * DAY, fromMs: 0, schedule: CALIFORNIA_SCHEDULE }],
      backfillFrom: null,
      enabled: true,
    },
  ],
  indicators: [
    {
      name: 'macro',
      indicators: ['NY.GDP.MKTP.CD', 'SP.POP.TOTL'],
      countries: ['US', 'CHN', 'WLD', 'DEU', 'IND'],
      fromYear: 1960,
      toYear: null,
      schedule: { kind: 'cron', pattern: '0 4 * * 1', timezone: null },
      enabled: true,
    },
  ],
};

describe('valid files', () => {
  it('parses the example of the issue into resolved values', () => {
    const jobs = parseJobsFile(readFileSync(fixture('example.yaml'), 'utf8'), 'example.yaml', now);
    expect(jobs).toEqual({ path: 'example.yaml', ...EXPECTED_EXAMPLE });
  });

  it('the top-level jobs.yaml is the example, with comments and a tiered refresh for the global stream', async () => {
    const jobs = await loadJobsFile(join(import.meta.dirname, '../../jobs.yaml'), now);
    const tenMinutes = { kind: 'every', everyMs: 600_000 } as const;
    const global = {
      ...EXPECTED_EXAMPLE.earthquakes[0],
      // The first tier's schedule and the last tier's within: what readers that know no tiers see.
      schedule: tenMinutes,
      lookbackMs: 60 * DAY,
      refresh: [
        { withinMs: 2 * 3_600_000, fromMs: 0, schedule: tenMinutes },
        { withinMs: 3 * DAY, fromMs: 2 * 3_600_000, schedule: { kind: 'every', everyMs: 6 * 3_600_000 } },
        { withinMs: 60 * DAY, fromMs: 3 * DAY, schedule: { kind: 'cron', pattern: '0 3 * * 0', timezone: null } },
      ],
    };
    expect({ ...jobs, path: 'x' }).toEqual({
      ...EXPECTED_EXAMPLE,
      path: 'x',
      earthquakes: [global, EXPECTED_EXAMPLE.earthquakes[1]],
    });
  });

  it('resolves every optional key', () => {
    const jobs = parseJobsFile(readFileSync(fixture('extras.yaml'), 'utf8'), 'extras.yaml', now);
    expect(jobs.earthquakes).toEqual([
      {
        name: 'tokyo.m4',
        minMagnitude: -1,
        circle: { latitude: 35.68, longitude: 139.69, radiusKm: 20001.6 },
        schedule: { kind: 'cron', pattern: '30 0 */6 * * *', timezone: 'Asia/Tokyo' },
        lookbackMs: DAY,
        refresh: [
          { withinMs: DAY, fromMs: 0, schedule: { kind: 'cron', pattern: '30 0 */6 * * *', timezone: 'Asia/Tokyo' } },
        ],
        backfillFrom: new Date('2024-01-01T00:00:00Z'),
        enabled: false,
      },
      {
        name: 'quick',
        minMagnitude: null,
        circle: null,
        schedule: { kind: 'every', everyMs: 30_000 },
        lookbackMs: DAY,
        refresh: [{ withinMs: DAY, fromMs: 0, schedule: { kind: 'every', everyMs: 30_000 } }],
        backfillFrom: null,
        enabled: true,
      },
    ]);
    expect(jobs.indicators).toEqual([
      {
        name: 'mortality',
        indicators: ['sp.dyn.imrt.in'],
        countries: ['DE', 'FR', '1W'],
        fromYear: 1960,
        toYear: 2026,
        schedule: { kind: 'every', everyMs: 7 * DAY },
        enabled: true,
      },
      {
        name: 'defaults',
        indicators: ['NY.GDP.MKTP.CD'],
        countries: ['WLD'],
        fromYear: null,
        toYear: null,
        schedule: { kind: 'cron', pattern: '0 4 1 * *', timezone: null },
        enabled: true,
      },
    ]);
  });

  it('accepts an empty or null list when the other list declares a stream', () => {
    expect(parse(`earthquakes: []\n${ind(...IND_OK)}`).earthquakes).toEqual([]);
    expect(parse(`earthquakes:\n${ind(...IND_OK)}`).indicators).toHaveLength(1);
    expect(parse(eq('every: 1m')).indicators).toEqual([]);
  });

  it('accepts spans longer than 70 years (the pipeline chunks them)', () => {
    expect(parse(ind(...IND_OK, 'from_year: 1960', 'to_year: 2026')).indicators[0]).toMatchObject({
      fromYear: 1960,
      toYear: 2026,
    });
  });

  it('follows YAML anchors and aliases', () => {
    const jobs = parse(
      [
        'earthquakes:',
        '  - name: a',
        '    circle: &ca { latitude: 1, longitude: 2, radius_km: 3 }',
        '    every: 1m',
        '  - name: b',
        '    circle: *ca',
        '    every: 1m',
        '',
      ].join('\n'),
    );
    expect(jobs.earthquakes[1]?.circle).toEqual({ latitude: 1, longitude: 2, radiusKm: 3 });
  });

  it('reads YAML 1.2 even under a %YAML 1.1 directive (no timestamps, no yes/no booleans)', () => {
    const jobs = parse(`%YAML 1.1\n---\n${eq('every: 1m', 'backfill_from: 2000-01-01')}`);
    expect(jobs.earthquakes[0]?.backfillFrom).toEqual(new Date('2000-01-01T00:00:00Z'));
  });
});

describe('one rule at a time: the message names the line and the path', () => {
  it('min_magnitude is -1 to 10', () => {
    expect(problems(eq('every: 1m', 'min_magnitude: 10.5'))).toEqual([
      'jobs.yaml:4  earthquakes[0].min_magnitude: must be at most 10, got 10.5',
    ]);
    expect(problems(eq('every: 1m', 'min_magnitude: -1.5'))).toEqual([
      'jobs.yaml:4  earthquakes[0].min_magnitude: must be at least -1, got -1.5',
    ]);
  });

  it('circle: latitude, longitude and radius_km are set together', () => {
    const text = [
      'earthquakes:',
      '  - name: global-m2_5',
      '    min_magnitude: 2.5',
      '    schedule: "*/10 * * * *"',
      '  - name: california',
      '    schedule: "*/5 * * * *"',
      '    circle: { latitude: 36.7, longitude: -119.4 }',
      '',
    ].join('\n');
    expect(problems(text)).toEqual([
      'jobs.yaml:7  earthquakes[1].circle: latitude, longitude and radius_km must be set together',
    ]);
    expect(problems(eq('every: 1m', 'circle: {}'))).toEqual([
      'jobs.yaml:4  earthquakes[0].circle: latitude, longitude and radius_km must be set together',
    ]);
  });

  it('circle: latitude -90..90, longitude -180..180, radius_km above 0 and at most 20001.6', () => {
    const circle = ['every: 1m', 'circle:', '  latitude: 90.5', '  longitude: -180.5', '  radius_km: 0'];
    expect(problems(eq(...circle))).toEqual([
      'jobs.yaml:5  earthquakes[0].circle.latitude: must be at most 90, got 90.5',
      'jobs.yaml:6  earthquakes[0].circle.longitude: must be at least -180, got -180.5',
      'jobs.yaml:7  earthquakes[0].circle.radius_km: must be greater than 0, got 0',
    ]);
    expect(problems(eq('every: 1m', 'circle: { latitude: 0, longitude: 0, radius_km: 20001.7 }'))).toEqual([
      'jobs.yaml:4  earthquakes[0].circle.radius_km: must be at most 20001.6, got 20001.7',
    ]);
  });

  it('indicator codes are 3 to 64 letters, digits, dot or underscore', () => {
    const long = 'A'.repeat(65);
    expect(problems(ind(`indicators: [NY, "SP POP", ${long}, NY.GDP_X1]`, 'countries: [US]', 'every: 1d'))).toEqual([
      'jobs.yaml:3  indicators[0].indicators[0]: must be 3 to 64 characters of letters, digits, dot or underscore, got the string "NY"',
      'jobs.yaml:3  indicators[0].indicators[1]: must be 3 to 64 characters of letters, digits, dot or underscore, got the string "SP POP"',
      `jobs.yaml:3  indicators[0].indicators[2]: must be 3 to 64 characters of letters, digits, dot or underscore, got the string "${'A'.repeat(37)}..."`,
    ]);
  });

  it('country codes are 2-3 characters, any case, normalised to upper case', () => {
    expect(
      parse(ind('indicators: [NY.GDP.MKTP.CD]', 'countries: [us, chn, Wld, 1w]', 'every: 1d')).indicators[0]?.countries,
    ).toEqual(['US', 'CHN', 'WLD', '1W']);
    expect(problems(ind('indicators: [NY.GDP.MKTP.CD]', 'countries: [USA1, U, "12"]', 'every: 1d'))).toEqual([
      'jobs.yaml:4  indicators[0].countries[0]: must be a 2 or 3 character country or aggregate code (A-Z, 0-9), got the string "USA1"',
      'jobs.yaml:4  indicators[0].countries[1]: must be a 2 or 3 character country or aggregate code (A-Z, 0-9), got the string "U"',
      'jobs.yaml:4  indicators[0].countries[2]: must be a 2 or 3 character country or aggregate code (A-Z, 0-9), got the string "12"',
    ]);
  });

  it('indicators and countries list at least one code, without duplicates', () => {
    expect(problems(ind('indicators: []', 'countries: [US, us]', 'every: 1d'))).toEqual([
      'jobs.yaml:3  indicators[0].indicators: must list at least 1 item',
      'jobs.yaml:4  indicators[0].countries[1]: duplicate of countries[0] ("us")',
    ]);
  });

  it('from_year is 1960 or later', () => {
    expect(problems(ind(...IND_OK, 'from_year: 1959'))).toEqual([
      'jobs.yaml:6  indicators[0].from_year: must be at least 1960, got 1959',
    ]);
  });

  it('from_year is not after the current year', () => {
    expect(problems(ind(...IND_OK, 'from_year: 2027'))).toEqual([
      'jobs.yaml:6  indicators[0].from_year: must not be after the current year (2026), got 2027',
    ]);
  });

  it('to_year is not after the current year', () => {
    expect(problems(ind(...IND_OK, 'from_year: 2000', 'to_year: 2027'))).toEqual([
      'jobs.yaml:7  indicators[0].to_year: must not be after the current year (2026), got 2027',
    ]);
  });

  it('to_year is not before from_year', () => {
    expect(problems(ind(...IND_OK, 'from_year: 2000', 'to_year: 1999'))).toEqual([
      'jobs.yaml:7  indicators[0].to_year: must not be before from_year (2000), got 1999',
    ]);
  });

  it('years are whole numbers', () => {
    expect(problems(ind(...IND_OK, 'from_year: 2000.5', 'to_year: "2001"'))).toEqual([
      'jobs.yaml:6  indicators[0].from_year: must be a whole number, got 2000.5',
      'jobs.yaml:7  indicators[0].to_year: must be a number, got the string "2001"',
    ]);
  });

  it('backfill_from is not in the future', () => {
    expect(problems(eq('every: 1m', 'backfill_from: 2026-06-16'))).toEqual([
      'jobs.yaml:4  earthquakes[0].backfill_from: must not be in the future (now is 2026-06-15T12:00:00.000Z), got "2026-06-16"',
    ]);
    expect(problems(eq('every: 1m', 'backfill_from: 2026-06-15T12:00:01Z'))).toHaveLength(1);
    expect(parse(eq('every: 1m', 'backfill_from: 2026-06-15T12:00:00Z')).earthquakes[0]?.backfillFrom).toEqual(NOW);
  });

  it('backfill_from is a calendar date or an RFC 3339 timestamp', () => {
    expect(problems(eq('every: 1m', 'backfill_from: 2023-02-29'))).toEqual([
      'jobs.yaml:4  earthquakes[0].backfill_from: "2023-02-29" is not a calendar date',
    ]);
    expect(problems(eq('every: 1m', 'backfill_from: 2023-01-01 10:00'))).toEqual([
      'jobs.yaml:4  earthquakes[0].backfill_from: must be a date (YYYY-MM-DD, UTC midnight) or an RFC 3339 timestamp (2000-01-01T00:00:00Z), got "2023-01-01 10:00"',
    ]);
  });

  it('schedule is a valid cron pattern of 5 or 6 fields', () => {
    expect(problems(eq('schedule: "61 * * * *"'))).toEqual([
      'jobs.yaml:3  earthquakes[0].schedule: invalid cron pattern: Constraint error, got value 61 expected range 0-59',
    ]);
    expect(problems(eq('schedule: "*/10 * * *"'))).toEqual([
      'jobs.yaml:3  earthquakes[0].schedule: must be a cron pattern of 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first, got 4 fields',
    ]);
    expect(problems(eq('schedule: "@daily"'))[0]).toContain('got 1 field');
    expect(problems(eq('schedule: 5'))).toEqual([
      'jobs.yaml:3  earthquakes[0].schedule: must be a cron pattern (quoted, such as "*/10 * * * *"), got 5',
    ]);
    expect(parse(eq('schedule: "0  */10 * * * *"')).earthquakes[0]?.schedule).toEqual({
      kind: 'cron',
      pattern: '0 */10 * * * *',
      timezone: null,
    });
  });

  it('durations are a positive whole number and a unit s, m, h or d', () => {
    const rule = 'must be a duration: a positive whole number and a unit s, m, h or d (30s, 10m, 6h, 7d)';
    expect(problems(eq('every: 10min', 'lookback: 0d'))).toEqual([
      `jobs.yaml:3  earthquakes[0].every: ${rule}, got "10min"`,
      `jobs.yaml:4  earthquakes[0].lookback: ${rule}, got "0d"`,
    ]);
    expect(problems(eq('every: 600'))).toEqual([
      'jobs.yaml:3  earthquakes[0].every: must be a duration such as 30s, 10m, 6h or 7d, got 600',
    ]);
  });

  it('lookback defaults to 1d and is an earthquake key only', () => {
    expect(parse(eq('every: 1m')).earthquakes[0]?.lookbackMs).toBe(DAY);
    expect(problems(ind(...IND_OK, 'lookback: 2d'))[0]).toMatch(
      /^jobs\.yaml:6 {2}indicators\[0\]\.lookback: unknown key/,
    );
  });

  it('schedule and every are not both set', () => {
    expect(problems(eq('schedule: "* * * * *"', 'every: 1m'))).toEqual([
      'jobs.yaml:4  earthquakes[0].every: set either schedule or every, not both',
    ]);
  });

  it('one of schedule, every or refresh is set, and the message names all three', () => {
    expect(problems(eq('lookback: 2d'))).toEqual([
      'jobs.yaml:2  earthquakes[0].schedule: required: set schedule (a cron pattern), every (a duration such as 10m), ' +
        'or refresh (tiers of within and schedule or every, see docs/jobs-yaml.md "Tiered refresh")',
    ]);
  });

  it('timezone is an IANA name, and only for schedule', () => {
    expect(parse(eq('schedule: "0 4 * * *"', 'timezone: europe/berlin')).earthquakes[0]?.schedule).toEqual({
      kind: 'cron',
      pattern: '0 4 * * *',
      timezone: 'Europe/Berlin',
    });
    expect(problems(eq('schedule: "0 4 * * *"', 'timezone: Mars/Olympus'))).toEqual([
      'jobs.yaml:4  earthquakes[0].timezone: unknown time zone "Mars/Olympus": use an IANA name such as UTC or Europe/Berlin',
    ]);
    expect(problems(eq('every: 1h', 'timezone: UTC'))).toEqual([
      'jobs.yaml:4  earthquakes[0].timezone: only applies to schedule (a cron pattern)',
    ]);
  });

  it('enabled is true or false', () => {
    expect(parse(eq('every: 1m', 'enabled: false')).earthquakes[0]?.enabled).toBe(false);
    expect(problems(eq('every: 1m', 'enabled: no'))).toEqual([
      'jobs.yaml:4  earthquakes[0].enabled: must be true or false, got the string "no"',
    ]);
  });

  it('names match /^[a-z0-9][a-z0-9_.-]{0,62}$/i', () => {
    expect(problems(['earthquakes:', '  - name: "-quakes"', '    every: 1m', ''].join('\n'))).toEqual([
      'jobs.yaml:2  earthquakes[0].name: must be 1 to 63 letters, digits, _ . or -, starting with a letter or digit, got the string "-quakes"',
    ]);
    expect(problems(['earthquakes:', `  - name: ${'a'.repeat(64)}`, '    every: 1m', ''].join('\n'))).toHaveLength(1);
    expect(
      parse(['earthquakes:', `  - name: ${'A'.repeat(63)}`, '    every: 1m', ''].join('\n')).earthquakes,
    ).toHaveLength(1);
  });

  it('names are unique across earthquakes and indicators', () => {
    const text = [
      'earthquakes:',
      '  - name: macro',
      '    every: 1m',
      'indicators:',
      '  - name: Macro',
      ...IND_OK.map((l) => `    ${l}`),
      '',
    ].join('\n');
    expect(problems(text)).toEqual([
      'jobs.yaml:5  indicators[0].name: duplicate stream name "Macro": already used by earthquakes[0].name (line 2)',
    ]);
  });

  it('required keys are listed on the line of their parent', () => {
    expect(problems(['indicators:', '  - every: 1d', ''].join('\n'))).toEqual([
      'jobs.yaml:2  indicators[0].name: required',
      'jobs.yaml:2  indicators[0].indicators: required',
      'jobs.yaml:2  indicators[0].countries: required',
    ]);
  });

  it('unknown keys are refused, with a suggestion', () => {
    expect(problems(eq('every: 1m', 'min_magnitud: 3', 'colour: red'))).toEqual([
      'jobs.yaml:4  earthquakes[0].min_magnitud: unknown key (did you mean min_magnitude?)',
      'jobs.yaml:5  earthquakes[0].colour: unknown key (allowed: name, enabled, min_magnitude, circle, schedule, every, timezone, lookback, refresh, backfill_from)',
    ]);
    expect(problems(`${eq('every: 1m')}streams: []\n`)).toEqual([
      'jobs.yaml:4  streams: unknown key (allowed: earthquakes, indicators)',
    ]);
    expect(problems(eq('every: 1m', 'circle: { latitude: 1, longitude: 2, radius_km: 3, depth_km: 4 }'))).toEqual([
      'jobs.yaml:4  earthquakes[0].circle.depth_km: unknown key (allowed: latitude, longitude, radius_km)',
    ]);
  });

  it('values have the right types', () => {
    expect(
      problems(['earthquakes:', '  - name: 2024', '    every: 1m', '    circle:', '  - just a string', ''].join('\n')),
    ).toEqual([
      'jobs.yaml:2  earthquakes[0].name: must be a string, got 2024',
      'jobs.yaml:4  earthquakes[0].circle: must be a mapping, got an empty value',
      'jobs.yaml:5  earthquakes[1]: must be a mapping, got the string "just a string"',
    ]);
    expect(problems('earthquakes: {}\n')).toEqual(['jobs.yaml:1  earthquakes: must be a list, got a mapping']);
  });

  it('the file declares at least one stream', () => {
    expect(problems('earthquakes: []\nindicators: []\n')).toEqual([
      'jobs.yaml:1  (root): declares no stream: add at least one under earthquakes or indicators',
    ]);
    expect(problems('# nothing yet\n')).toEqual([
      'jobs.yaml:1  (root): the file is empty: declare at least one stream under earthquakes or indicators',
    ]);
  });

  it('the document is a mapping', () => {
    expect(problems('- name: a\n  every: 1m\n')).toEqual([
      'jobs.yaml:1  (root): must be a mapping with the keys earthquakes and/or indicators, got a list',
    ]);
    expect(problems('just text\n')).toEqual([
      'jobs.yaml:1  (root): must be a mapping with the keys earthquakes and/or indicators, got the string "just text"',
    ]);
  });

  it('YAML syntax errors are listed with their line', () => {
    const lines = problems(
      ['earthquakes:', '  - name: a', '    every: 1m', '    circle: "unterminated', '  - name: b', ''].join('\n'),
    );
    expect(lines).toHaveLength(1);
    expect(lines).toEqual([
      'jobs.yaml:4  earthquakes[0].circle: YAML syntax error: Missing closing "quote (column 13: the value is not closed before line 6)',
    ]);
    expect(problems('earthquakes:\n  - name: a\n    circle: { latitude: 1\n    every: 1m\n')).toEqual([
      'jobs.yaml:3  earthquakes[0].circle: YAML syntax error: Flow map in block collection must be sufficiently indented and end with a } (column 13: the value is not closed before line 4)',
    ]);
    expect(problems('earthquakes:\n\t- name: a\n')[0]).toMatch(/^jobs\.yaml:2 {2}.*YAML syntax error/);
    // A key indented by three spaces among keys indented by four: that line, and nothing said of unclosed values.
    const misindented = ['indicators:', '  - name: m', '    indicators: [SP.POP.TOTL]', '   countries: [US]', ''];
    expect(problems(misindented.join('\n'))[0]).toBe(
      'jobs.yaml:4  indicators: YAML syntax error: Sequence item without - indicator (column 1; check the indentation of this line)',
    );
    expect(problems(`${eq('every: 1m')}---\nindicators: []\n`)).toEqual([
      'jobs.yaml:4  (root): the file must hold a single YAML document (remove the --- separator) (column 1)',
    ]);
  });

  it('duplicate YAML keys are refused, with both lines', () => {
    expect(problems(eq('every: 1m', 'lookback: 2d', 'lookback: 3d'))).toEqual([
      'jobs.yaml:5  earthquakes[0].lookback: duplicate key (first set at line 4)',
    ]);
  });

  it('aliases must refer to an anchor', () => {
    expect(problems('earthquakes:\n  - *nope\n')).toEqual([
      'jobs.yaml:2  earthquakes[0]: alias *nope refers to no anchor',
    ]);
  });
});

describe('the whole file is refused with every problem', () => {
  it('lists several problems at once, in line order', () => {
    const file = fixture('invalid.yaml');
    let caught: unknown;
    try {
      parseJobsFile(readFileSync(file, 'utf8'), 'invalid.yaml', now);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(JobsFileError);
    expect(caught).toBeInstanceOf(UsageError);
    const error = caught as JobsFileError;
    const rule = 'must be a duration: a positive whole number and a unit s, m, h or d (30s, 10m, 6h, 7d)';
    expect(error.message.split('\n')).toEqual([
      'invalid.yaml:3  earthquakes[0].min_magnitude: must be at most 10, got 10.5',
      'invalid.yaml:4  earthquakes[0].schedule: must be a cron pattern of 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first, got 4 fields',
      'invalid.yaml:5  earthquakes[0].every: set either schedule or every, not both',
      'invalid.yaml:6  earthquakes[1].name: duplicate stream name "Global": already used by earthquakes[0].name (line 2)',
      'invalid.yaml:7  earthquakes[1].circle: latitude, longitude and radius_km must be set together',
      `invalid.yaml:8  earthquakes[1].every: ${rule}, got "10min"`,
      `invalid.yaml:9  earthquakes[1].lookback: ${rule}, got "0d"`,
      'invalid.yaml:10  earthquakes[1].backfill_from: must not be in the future (now is 2026-06-15T12:00:00.000Z), got "2099-01-01"',
      'invalid.yaml:13  indicators[0].indicators[1]: must be 3 to 64 characters of letters, digits, dot or underscore, got the string "SP POP"',
      'invalid.yaml:14  indicators[0].countries[1]: must be a 2 or 3 character country or aggregate code (A-Z, 0-9), got the string "CHINA"',
      'invalid.yaml:15  indicators[0].from_year: must be at least 1960, got 1959',
      'invalid.yaml:16  indicators[0].to_year: must not be after the current year (2026), got 2099',
      'invalid.yaml:18  indicators[0].colour: unknown key (allowed: name, enabled, indicators, countries, from_year, to_year, schedule, every, timezone)',
    ]);
    expect(error.problems[0]).toEqual({
      file: 'invalid.yaml',
      line: 3,
      path: 'earthquakes[0].min_magnitude',
      reason: 'must be at most 10, got 10.5',
    });
    expect(error.problems).toHaveLength(13);
  });

  it('lists duplicate keys together with the other problems', () => {
    expect(problems(eq('every: 1m', 'every: 2m', 'min_magnitude: 11'))).toEqual([
      'jobs.yaml:4  earthquakes[0].every: duplicate key (first set at line 3)',
      'jobs.yaml:5  earthquakes[0].min_magnitude: must be at most 10, got 11',
    ]);
  });
});

describe('loadJobsFile', () => {
  it('reads the file and names it in problems', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'jobs-file-'));
    try {
      const path = join(dir, 'jobs.yaml');
      await writeFile(path, eq('every: 1m', 'lookback: 1w'));
      await expect(loadJobsFile(path, now)).rejects.toThrow(`${path}:4  earthquakes[0].lookback: must be a duration`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a missing file is a JobsFileError naming the path', async () => {
    const path = join(tmpdir(), 'no-such-dir-jobs', 'jobs.yaml');
    const error: unknown = await loadJobsFile(path, now).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobsFileError);
    expect((error as JobsFileError).message).toBe(
      `${path}: jobs file not found: create it (see docs/jobs-yaml.md) or pass --config PATH`,
    );
    expect((error as JobsFileError).problems).toEqual([
      {
        file: path,
        line: 0,
        path: '',
        reason: 'jobs file not found: create it (see docs/jobs-yaml.md) or pass --config PATH',
      },
    ]);
  });
});

describe('parseDurationMs', () => {
  it.each([
    ['30s', 30_000],
    ['10m', 600_000],
    ['6h', 21_600_000],
    ['7d', 7 * DAY],
    ['1s', 1_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDurationMs(text)).toBe(ms);
    expect(formatDurationMs(ms)).toBe(text);
  });

  it.each([
    '0s',
    '-1m',
    '1.5h',
    '10',
    'm',
    '10M',
    '10 m',
    ' 10m',
    '1h30m',
    '7days',
    '010m',
    '',
    '99999999999999999999d',
  ])('%j is not a duration', (text) => {
    expect(parseDurationMs(text)).toBeNull();
  });
});
