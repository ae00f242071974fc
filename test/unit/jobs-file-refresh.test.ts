import { describe, expect, it } from 'vitest';
import { REFRESH_LIMITS } from '../../src/config/jobs-file.js';
import { eq, parse, problems } from '../support/jobs-yaml.js';

/** Tiered refresh of earthquake streams (`refresh:` in jobs.yaml, docs/jobs-yaml.md). */

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** A stream whose refresh list holds these tiers, one flow mapping a line (line 4 onwards). */
const tiers = (...items: string[]) => eq('refresh:', ...items.map((t) => `  - ${t}`));

const TEN_MINUTES = { kind: 'every', everyMs: 600_000 } as const;

describe('refresh: valid tiers', () => {
  it('resolves the tiers of the issue into bands, each starting where the one before it ends', () => {
    const stream = parse(
      tiers('{ within: 2h, every: 10m }', '{ within: 3d, every: 6h }', '{ within: 60d, schedule: "0 3 * * 0" }'),
    ).earthquakes[0];
    expect(stream?.refresh).toEqual([
      { withinMs: 2 * HOUR, fromMs: 0, schedule: TEN_MINUTES },
      { withinMs: 3 * DAY, fromMs: 2 * HOUR, schedule: { kind: 'every', everyMs: 6 * HOUR } },
      { withinMs: 60 * DAY, fromMs: 3 * DAY, schedule: { kind: 'cron', pattern: '0 3 * * 0', timezone: null } },
    ]);
    // Readers that know no tiers: the most frequent schedule, and how far back the stream reads at all.
    expect(stream?.schedule).toEqual(TEN_MINUTES);
    expect(stream?.lookbackMs).toBe(60 * DAY);
  });

  it('accepts block mappings, a time zone per cron tier and the bounds of within', () => {
    const text = eq(
      'refresh:',
      '  - within: 1m',
      '    schedule: "0 */6 * * *"',
      '    timezone: europe/berlin',
      '  - within: 366d',
      '    every: 1s',
    );
    expect(parse(text).earthquakes[0]?.refresh).toEqual([
      { withinMs: 60_000, fromMs: 0, schedule: { kind: 'cron', pattern: '0 */6 * * *', timezone: 'Europe/Berlin' } },
      { withinMs: 366 * DAY, fromMs: 60_000, schedule: { kind: 'every', everyMs: 1_000 } },
    ]);
  });

  it('one tier reads like schedule or every with a lookback', () => {
    expect(parse(tiers('{ within: 7d, every: 10m }')).earthquakes[0]).toEqual(
      parse(eq('every: 10m', 'lookback: 7d')).earthquakes[0],
    );
  });

  it('a stream without refresh has one tier: its schedule over its lookback (1d by default)', () => {
    expect(parse(eq('every: 10m')).earthquakes[0]?.refresh).toEqual([
      { withinMs: DAY, fromMs: 0, schedule: TEN_MINUTES },
    ]);
  });

  it('takes up to 8 tiers', () => {
    const eight = Array.from({ length: REFRESH_LIMITS.maxTiers }, (_, i) => `{ within: ${i + 1}d, every: 1h }`);
    expect(parse(tiers(...eight)).earthquakes[0]?.refresh).toHaveLength(8);
  });
});

describe('refresh: one rule at a time, with its line and path', () => {
  it('refresh replaces schedule, every and lookback: each one set with it is a problem naming both keys', () => {
    expect(
      problems(eq('schedule: "*/10 * * * *"', 'lookback: 7d', 'refresh:', '  - { within: 2h, every: 10m }')),
    ).toEqual([
      'jobs.yaml:3  earthquakes[0].schedule: set either refresh or schedule, not both: with refresh, each tier has its own schedule or every',
      "jobs.yaml:4  earthquakes[0].lookback: set either refresh or lookback, not both: with refresh, the last tier's within is how far back the stream re-reads",
    ]);
    expect(problems(eq('refresh:', '  - { within: 2h, every: 10m }', 'every: 10m'))).toEqual([
      'jobs.yaml:5  earthquakes[0].every: set either refresh or every, not both: with refresh, each tier has its own schedule or every',
    ]);
  });

  it('a stream-level timezone has nothing to apply to with refresh', () => {
    expect(problems(eq('timezone: UTC', 'refresh:', '  - { within: 2h, schedule: "0 * * * *" }'))).toEqual([
      'jobs.yaml:3  earthquakes[0].timezone: only applies to schedule (a cron pattern): with refresh, set timezone on the tiers that have a schedule',
    ]);
  });

  it('refresh is a list of 1 to 8 tiers', () => {
    expect(problems(eq('refresh: []'))).toEqual(['jobs.yaml:3  earthquakes[0].refresh: must list at least 1 item']);
    expect(problems(eq('refresh:'))).toEqual([
      'jobs.yaml:3  earthquakes[0].refresh: must be a list, got an empty value',
    ]);
    expect(problems(eq('refresh: { within: 2h, every: 10m }'))).toEqual([
      'jobs.yaml:3  earthquakes[0].refresh: must be a list, got a mapping',
    ]);
    const nine = Array.from({ length: 9 }, (_, i) => `{ within: ${i + 1}d, every: 1h }`);
    expect(problems(tiers(...nine))).toEqual(['jobs.yaml:3  earthquakes[0].refresh: must list at most 8 items']);
  });

  it('a tier is a mapping', () => {
    expect(problems(tiers('2h'))).toEqual([
      'jobs.yaml:4  earthquakes[0].refresh[0]: must be a mapping, got the string "2h"',
    ]);
  });

  it('within is required, a duration of 1m to 366d', () => {
    const rule = 'must be a duration: a positive whole number and a unit s, m, h or d (30s, 10m, 6h, 7d)';
    expect(
      problems(
        tiers(
          '{ every: 1m }',
          '{ within: 59s, every: 1m }',
          '{ within: 367d, every: 1m }',
          '{ within: 2 days, every: 1m }',
        ),
      ),
    ).toEqual([
      'jobs.yaml:4  earthquakes[0].refresh[0].within: required',
      'jobs.yaml:5  earthquakes[0].refresh[1].within: must be at least 1m, got "59s"',
      'jobs.yaml:6  earthquakes[0].refresh[2].within: must be at most 366d, got "367d"',
      `jobs.yaml:7  earthquakes[0].refresh[3].within: ${rule}, got "2 days"`,
    ]);
    expect(problems(tiers('{ within: 120, every: 1m }'))).toEqual([
      'jobs.yaml:4  earthquakes[0].refresh[0].within: must be a duration such as 30s, 10m, 6h or 7d, got 120',
    ]);
  });

  it('within grows from tier to tier: the tier that does not is named, with the one before it', () => {
    expect(
      problems(tiers('{ within: 3d, every: 1h }', '{ within: 2h, every: 10m }', '{ within: 60d, every: 7d }')),
    ).toEqual([
      'jobs.yaml:5  earthquakes[0].refresh[1].within: must be longer than the tier before it (refresh[0].within: 3d), got "2h"',
    ]);
    // Equal is not longer; units do not matter, durations do.
    expect(problems(tiers('{ within: 1d, every: 1h }', '{ within: 24h, every: 1h }'))).toEqual([
      'jobs.yaml:5  earthquakes[0].refresh[1].within: must be longer than the tier before it (refresh[0].within: 1d), got "24h"',
    ]);
  });

  it('an invalid within is reported once, and the next tier is compared with the last valid one', () => {
    expect(
      problems(tiers('{ within: 2d, every: 1h }', '{ within: 0d, every: 1h }', '{ within: 1d, every: 1h }')),
    ).toEqual([
      'jobs.yaml:5  earthquakes[0].refresh[1].within: must be a duration: a positive whole number and a unit s, m, h or d (30s, 10m, 6h, 7d), got "0d"',
      'jobs.yaml:6  earthquakes[0].refresh[2].within: must be longer than the tier before it (refresh[0].within: 2d), got "1d"',
    ]);
  });

  it('a tier sets exactly one of every and schedule, checked like a stream', () => {
    expect(problems(tiers('{ within: 2h }', '{ within: 3d, every: 6h, schedule: "0 * * * *" }'))).toEqual([
      'jobs.yaml:4  earthquakes[0].refresh[0].schedule: required: set either schedule (a cron pattern) or every (a duration such as 10m)',
      'jobs.yaml:5  earthquakes[0].refresh[1].every: set either schedule or every, not both',
    ]);
  });

  it("a tier's schedule, every and timezone follow the stream rules", () => {
    expect(
      problems(
        tiers(
          '{ within: 1h, schedule: "61 * * * *" }',
          '{ within: 2h, every: 0m }',
          '{ within: 3h, every: 1h, timezone: UTC }',
          '{ within: 4h, schedule: "0 * * * *", timezone: Mars/Olympus }',
        ),
      ),
    ).toEqual([
      'jobs.yaml:4  earthquakes[0].refresh[0].schedule: invalid cron pattern: Constraint error, got value 61 expected range 0-59',
      'jobs.yaml:5  earthquakes[0].refresh[1].every: must be a duration: a positive whole number and a unit s, m, h or d (30s, 10m, 6h, 7d), got "0m"',
      'jobs.yaml:6  earthquakes[0].refresh[2].timezone: only applies to schedule (a cron pattern)',
      'jobs.yaml:7  earthquakes[0].refresh[3].timezone: unknown time zone "Mars/Olympus": use an IANA name such as UTC or Europe/Berlin',
    ]);
  });

  it('unknown keys of a tier are refused, with a suggestion or the allowed keys', () => {
    expect(problems(tiers('{ within: 2h, every: 10m, lookback: 1d }', '{ witin: 3d, every: 6h }'))).toEqual([
      'jobs.yaml:4  earthquakes[0].refresh[0].lookback: unknown key (allowed: within, schedule, every, timezone)',
      'jobs.yaml:5  earthquakes[0].refresh[1].within: required',
      'jobs.yaml:5  earthquakes[0].refresh[1].witin: unknown key (did you mean within?)',
    ]);
  });

  it('a tier written as a block mapping is reported on the line of the key', () => {
    expect(problems(eq('refresh:', '  - within: 2h', '    every: 10m', '  - within: 1h', '    every: 1h'))).toEqual([
      'jobs.yaml:6  earthquakes[0].refresh[1].within: must be longer than the tier before it (refresh[0].within: 2h), got "1h"',
    ]);
  });

  it('refresh is an earthquake key only', () => {
    const text = [
      'indicators:',
      '  - name: macro',
      '    indicators: [NY.GDP.MKTP.CD]',
      '    countries: [US]',
      '    every: 1d',
      '    refresh: []',
      '',
    ];
    expect(problems(text.join('\n'))).toEqual([
      'jobs.yaml:6  indicators[0].refresh: unknown key (allowed: name, enabled, indicators, countries, from_year, to_year, schedule, every, timezone)',
    ]);
  });

  it('lists every problem of every tier at once, in line order', () => {
    const text = eq('every: 1m', 'refresh:', '  - { within: 2h }', '  - { within: 1h, every: 10m, colour: red }');
    expect(problems(text)).toEqual([
      'jobs.yaml:3  earthquakes[0].every: set either refresh or every, not both: with refresh, each tier has its own schedule or every',
      'jobs.yaml:5  earthquakes[0].refresh[0].schedule: required: set either schedule (a cron pattern) or every (a duration such as 10m)',
      'jobs.yaml:6  earthquakes[0].refresh[1].colour: unknown key (allowed: within, schedule, every, timezone)',
      'jobs.yaml:6  earthquakes[0].refresh[1].within: must be longer than the tier before it (refresh[0].within: 2h), got "1h"',
    ]);
  });
});
