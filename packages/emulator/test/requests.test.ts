import { describe, expect, it } from 'vitest';
import type { EarthquakeEvent } from '../../../src/gateway/schemas.js';
import { resolveBehaviour } from '../src/behaviour.js';
import { CatalogIndex } from '../src/catalog-index.js';
import { IndicatorStore } from '../src/indicator-store.js';
import { execute, type OperationContext } from '../src/operations.js';
import { createRng } from '../src/rng.js';
import { breakResult } from '../src/schema-break.js';
import { stripInvocationId } from '../src/validation.js';
import { earthquakeResultSchema, indicatorResultSchema } from '../../../src/gateway/schemas.js';
import { wireEvent } from '../../../test/support/events.js';

const NOW = new Date('2025-06-10T00:00:00Z');

function event(i: number, magnitude: number | null = 2): EarthquakeEvent {
  return wireEvent(`ev${i}`, Date.parse('2025-06-01T00:00:00Z') + i * 60_000, magnitude);
}

function ctx(over: Partial<OperationContext> = {}): OperationContext {
  return {
    now: () => NOW,
    catalog: new CatalogIndex(Array.from({ length: 120 }, (_, i) => event(i, i === 5 ? null : 2))),
    indicators: new IndicatorStore([
      {
        indicatorId: 'SP.POP.TOTL',
        indicatorName: 'Population, total',
        lastUpdated: '2018-01-25',
        years: [2014, 2015, 2016],
        rows: [{ countryName: 'United States', countryCode: 'USA', wbId: 'US', values: [1, null, 3] }],
      },
    ]),
    behaviour: resolveBehaviour({}),
    orderRng: createRng(1),
    mixedRng: createRng(2),
    emptyAs: 'array',
    ...over,
  };
}

const eq = (extra: Record<string, unknown> = {}) => ({
  provider: 'quake-catalog',
  start_time: '2025-06-01T00:00:00Z',
  end_time: '2025-06-02T00:00:00Z',
  ...extra,
});

function messageOf(op: 'earthquake' | 'indicator', body: unknown): string {
  const r = execute(op, body, ctx());
  if (r.kind !== 'parameter_error') throw new Error(`expected a parameter error, got ${r.kind}`);
  return r.message;
}

describe('earthquake request validation', () => {
  it('rejects a 32-day window, max_results 201, an incomplete circle and unknown fields', () => {
    expect(messageOf('earthquake', eq({ end_time: '2025-07-03T00:00:00Z' }))).toBe(
      'end_time: must be at most 31 days after start_time',
    );
    expect(messageOf('earthquake', eq({ max_results: 201 }))).toMatch(/^max_results: /);
    expect(messageOf('earthquake', eq({ latitude: 1, longitude: 2 }))).toBe(
      'radius_km: latitude, longitude and radius_km must be set together or all be absent',
    );
    expect(messageOf('earthquake', eq({ colour: 'red' }))).toBe('colour: unknown field');
    expect(messageOf('earthquake', eq({ invocation_id: 'x' }))).toBe('invocation_id: unknown field');
  });

  it('accepts exactly 31 days and rejects a future start by the gateway clock', () => {
    expect(execute('earthquake', eq({ end_time: '2025-07-02T00:00:00Z' }), ctx()).kind).toBe('succeeded');
    expect(messageOf('earthquake', eq({ start_time: '2025-06-11T00:00:00Z', end_time: '2025-06-12T00:00:00Z' }))).toBe(
      'start_time: must not be in the future',
    );
  });

  it('names missing fields and non-object bodies', () => {
    expect(messageOf('earthquake', { provider: 'quake-catalog', end_time: '2025-06-02T00:00:00Z' })).toBe(
      'start_time: is required',
    );
    expect(messageOf('earthquake', [1, 2])).toBe('body: must be a JSON object');
    expect(messageOf('earthquake', null)).toBe('body: must be a JSON object');
    expect(messageOf('earthquake', eq({ provider: 'development-indicators' }))).toMatch(/^provider: /);
    expect(messageOf('earthquake', eq({ min_magnitude: -1.5 }))).toMatch(/^min_magnitude: /);
  });

  it('caps at max_results (default 50) and counts matches', () => {
    const r = execute('earthquake', eq(), ctx());
    expect(r.kind === 'succeeded' && [r.units, r.matched, r.truncated]).toEqual([50, 120, true]);
    const r2 = execute('earthquake', eq({ max_results: 200, min_magnitude: 0 }), ctx());
    expect(r2.kind === 'succeeded' && [r2.units, r2.matched, r2.truncated]).toEqual([119, 119, false]);
    if (r.kind !== 'succeeded') return;
    const events = (r.result as { events: EarthquakeEvent[] }).events;
    expect(events[0]!.id).toBe('ev119');
    expect(earthquakeResultSchema.safeParse(r.result).success).toBe(true);
  });

  it('writes an empty match as [] or null', () => {
    const body = eq({ start_time: '2024-01-01T00:00:00Z', end_time: '2024-01-02T00:00:00Z' });
    const a = execute('earthquake', body, ctx());
    const n = execute('earthquake', body, ctx({ emptyAs: 'null' }));
    expect(a.kind === 'succeeded' && a.result).toMatchObject({ events: [] });
    expect(n.kind === 'succeeded' && n.result).toMatchObject({ events: null });
    expect(n.kind === 'succeeded' && n.units).toBe(0);
  });
});

describe('indicator request validation', () => {
  const ind = (extra: Record<string, unknown> = {}) => ({
    provider: 'development-indicators',
    country: 'USA',
    indicator: 'SP.POP.TOTL',
    ...extra,
  });

  it('rejects spans over 70 years, years after the current one and bad codes', () => {
    expect(messageOf('indicator', ind({ start_year: 1960, end_year: 2030 }))).toMatch(/^end_year: /);
    expect(messageOf('indicator', ind({ end_year: 2026 }))).toBe('end_year: must not be after 2025');
    expect(messageOf('indicator', ind({ start_year: 1959 }))).toMatch(/^start_year: /);
    expect(messageOf('indicator', ind({ country: 'usa' }))).toMatch(/^country: /);
    expect(messageOf('indicator', ind({ indicator: 'ab' }))).toMatch(/^indicator: /);
  });

  it('turns unknown indicators and countries into parameter errors naming them', () => {
    expect(messageOf('indicator', ind({ indicator: 'NY.GDP.MKTP.CD' }))).toBe(
      'indicator: unknown indicator NY.GDP.MKTP.CD',
    );
    expect(messageOf('indicator', ind({ country: 'ZZZ' }))).toBe('country: unknown country or aggregate code ZZZ');
  });

  it('answers every requested year, units counting the null ones too', () => {
    const r2 = execute('indicator', ind({ start_year: 2012, end_year: 2017 }), ctx());
    expect(r2.kind === 'succeeded' && [r2.units, r2.matched, r2.truncated]).toEqual([6, 6, false]);
    expect(r2.kind === 'succeeded' && r2.result).toMatchObject({
      values: [
        { year: 2017, value: null },
        { year: 2016, value: 3 },
        { year: 2015, value: null },
        { year: 2014, value: 1 },
        { year: 2013, value: null },
        { year: 2012, value: null },
      ],
    });
    const nulls = execute('indicator', ind({ start_year: 2000, end_year: 2001 }), ctx({ emptyAs: 'null' }));
    expect(nulls.kind === 'succeeded' && nulls.result).toMatchObject({
      values: [
        { year: 2001, value: null },
        { year: 2000, value: null },
      ],
    });
    expect(nulls.kind === 'succeeded' && nulls.units).toBe(2);
  });

  it('answers with units = values', () => {
    const r = execute('indicator', ind({ start_year: 2015, end_year: 2016 }), ctx());
    expect(r.kind === 'succeeded' && r.units).toBe(2);
    expect(r.kind === 'succeeded' && r.result).toMatchObject({
      country: { id: 'US', name: 'United States' },
      values: [
        { year: 2016, value: 3 },
        { year: 2015, value: null },
      ],
    });
  });
});

describe('invocation_id and schema breaks', () => {
  it('strips invocation_id and says whether one was there', () => {
    expect(stripInvocationId({ a: 1, invocation_id: 'x' })).toEqual({ body: { a: 1 }, hadInvocationId: true });
    expect(stripInvocationId({ a: 1 })).toEqual({ body: { a: 1 }, hadInvocationId: false });
    expect(stripInvocationId('text')).toEqual({ body: 'text', hadInvocationId: false });
  });

  it('breaks results so that the response schemas reject them, without touching the original', () => {
    const r = execute('earthquake', eq(), ctx());
    const i = execute(
      'indicator',
      { provider: 'development-indicators', country: 'US', indicator: 'SP.POP.TOTL', start_year: 2014, end_year: 2016 },
      ctx(),
    );
    if (r.kind !== 'succeeded' || i.kind !== 'succeeded') throw new Error('expected success');
    expect(earthquakeResultSchema.safeParse(breakResult('earthquake', r.result)).success).toBe(false);
    expect(earthquakeResultSchema.safeParse(r.result).success).toBe(true);
    expect(indicatorResultSchema.safeParse(breakResult('indicator', i.result)).success).toBe(false);
    expect(earthquakeResultSchema.safeParse(breakResult('earthquake', { events: [], source: {} })).success).toBe(false);
  });
});
