import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { indicatorResultSchema } from '../../../src/gateway/schemas.js';
import { WB_ID_BY_ALPHA3, wbIdOf } from '../src/country-codes.js';
import { bundledDataDir } from '../src/bundled-data.js';
import { IndicatorStore } from '../src/indicator-store.js';
import { loadWorldBankCsv, loadWorldBankFile } from '../src/worldbank.js';
import { startEmulator } from '../src/server.js';

const wb = (name: string) => join(bundledDataDir(), 'worldbank', name);
const gdp = loadWorldBankCsv(readFileSync(wb('API_NY.GDP.MKTP.CD_DS2_en_csv_v2.csv'), 'utf8'));
const pop = loadWorldBankCsv(readFileSync(wb('API_SP.POP.TOTL_DS2_en_csv_v2.csv'), 'utf8'));
const imr = loadWorldBankCsv(readFileSync(wb('API_SP.DYN.IMRT.IN_DS2_en_csv_v2.csv'), 'utf8'));
const store = new IndicatorStore([gdp, pop, imr]);

const req = (country: string, indicator: string, start_year?: number, end_year?: number) => ({
  provider: 'development-indicators' as const,
  country,
  indicator,
  ...(start_year === undefined ? {} : { start_year }),
  ...(end_year === undefined ? {} : { end_year }),
});

describe('World Bank bulk CSV loader', () => {
  it('reads preamble, indicator and year columns', () => {
    expect(gdp.indicatorId).toBe('NY.GDP.MKTP.CD');
    expect(gdp.indicatorName).toBe('GDP at market prices (current US$)');
    expect(gdp.lastUpdated).toBe('2016-05-02');
    expect(gdp.years).toEqual(Array.from({ length: 56 }, (_, i) => 1960 + i));
    expect(gdp.rows).toHaveLength(248);
    expect(pop.lastUpdated).toBe('2018-01-25');
    expect(pop.years.at(-1)).toBe(2017);
    expect(pop.rows).toHaveLength(264);
    expect(imr.indicatorName).toBe('Mortality rate, infant (per 1,000 live births)');
    expect(imr.rows).toHaveLength(264);
  });

  it('keeps empty cells as null and parses the rest as numbers', () => {
    const aruba = pop.rows.find((r) => r.countryCode === 'ABW')!;
    expect(aruba.countryName).toBe('Aruba');
    expect(aruba.values.slice(0, 2)).toEqual([54211, 55438]);
    expect(gdp.rows.find((r) => r.countryCode === 'ABW')!.values[0]).toBeNull();
    const usa = gdp.rows.find((r) => r.countryCode === 'USA')!;
    expect(usa.values.slice(-2)).toEqual([17419000000000, null]);
    const nulls = pop.rows.flatMap((r) => r.values).filter((v) => v === null).length;
    expect(nulls).toBeGreaterThan(0);
  });

  it('gives the live API ids: USA -> US, CHN -> CN, WLD -> 1W', () => {
    const id = (code: string) => pop.rows.find((r) => r.countryCode === code)!.wbId;
    expect([id('USA'), id('CHN'), id('WLD'), id('EUU'), id('XKX'), id('CHI')]).toEqual([
      'US',
      'CN',
      '1W',
      'EU',
      'XK',
      'JG',
    ]);
    expect(gdp.rows.find((r) => r.countryCode === 'KSV')!.wbId).toBe('XK');
  });

  it('has a table entry for every code in the three fixture files, unique per file', async () => {
    for (const d of [gdp, pop, imr]) {
      const missing = d.rows.map((r) => r.countryCode).filter((c) => !(c in WB_ID_BY_ALPHA3));
      expect(missing).toEqual([]);
      expect(new Set(d.rows.map((r) => r.wbId)).size).toBe(d.rows.length);
    }
    expect(await loadWorldBankFile(wb('API_SP.POP.TOTL_DS2_en_csv_v2.csv'))).toEqual(pop);
  });

  it('maps every table entry to a 2-character id, aggregates included', () => {
    for (const [alpha3, id] of Object.entries(WB_ID_BY_ALPHA3)) {
      expect(alpha3).toMatch(/^[A-Z]{3}$/);
      expect(id).toMatch(/^[A-Z0-9]{2}$/);
    }
    const aggregates = {
      WLD: '1W',
      EUU: 'EU',
      HIC: 'XD',
      LMY: 'XO',
      ARB: '1A',
      EAP: '4E',
      TEA: 'T4',
      SAS: '8S',
      INX: 'XY',
      OED: 'OE',
    };
    for (const [alpha3, id] of Object.entries(aggregates)) expect(WB_ID_BY_ALPHA3[alpha3]).toBe(id);
    expect([wbIdOf('USA'), wbIdOf('US'), wbIdOf('1W'), wbIdOf('WLD'), wbIdOf('QQ'), wbIdOf('QQQ')]).toEqual([
      'US',
      'US',
      '1W',
      '1W',
      null,
      null,
    ]);
  });

  it('tolerates a synthetic file with BOM, preamble and trailing commas', () => {
    const text =
      '\uFEFF"Data Source","World Development Indicators",\n\n"Last Updated Date","2020-01-02",\n\n' +
      '"Country Name","Country Code","Indicator Name","Indicator Code","1960","1961",\n' +
      '"United States","USA","Thing","X.Y.Z","1.5","",\n';
    expect(loadWorldBankCsv(text)).toEqual({
      indicatorId: 'X.Y.Z',
      indicatorName: 'Thing',
      lastUpdated: '2020-01-02',
      years: [1960, 1961],
      rows: [{ countryName: 'United States', countryCode: 'USA', wbId: 'US', values: [1.5, null] }],
    });
    expect(() => loadWorldBankCsv('"a","b"\n')).toThrow(/header/);
  });
});

describe('IndicatorStore', () => {
  it('answers alpha-2, alpha-3 and World Bank ids with the 2-character id', () => {
    for (const code of ['US', 'USA']) {
      const r = store.lookup(req(code, 'SP.POP.TOTL', 2010, 2016), 2026);
      expect(r.ok).toBe(true);
      if (!r.ok) continue;
      expect(r.result.country).toEqual({ id: 'US', name: 'United States' });
      expect(r.result.values!.map((v) => v.year)).toEqual([2016, 2015, 2014, 2013, 2012, 2011, 2010]);
      expect(indicatorResultSchema.safeParse(r.result).success).toBe(true);
    }
    const world = store.lookup(req('1W', 'SP.POP.TOTL', 2000, 2000), 2026);
    const world3 = store.lookup(req('WLD', 'SP.POP.TOTL', 2000, 2000), 2026);
    expect(world).toEqual(world3);
    expect(world.ok && world.result.country.id).toBe('1W');
    const china = store.lookup(req('CHN', 'NY.GDP.MKTP.CD', 1960, 1960), 2026);
    expect(china.ok && china.result.country.id).toBe('CN');
  });

  it('uses the default years and answers every requested year, null after the last column', () => {
    const r = store.lookup(req('USA', 'SP.POP.TOTL'), 2016);
    expect(r.ok && r.result.values!.map((v) => v.year)).toEqual([
      2016, 2015, 2014, 2013, 2012, 2011, 2010, 2009, 2008, 2007,
    ]);
    expect(r.ok && r.result.values!.every((v) => v.value !== null)).toBe(true);
    const late = store.lookup(req('USA', 'SP.POP.TOTL'), 2026);
    expect(late.ok && late.result.values).toEqual(
      Array.from({ length: 10 }, (_, i) => ({ year: 2026 - i, value: null })),
    );
    const gdpLate = store.lookup(req('USA', 'NY.GDP.MKTP.CD', 2014, 2026), 2026);
    expect(gdpLate.ok && gdpLate.result).toMatchObject({
      indicator: { id: 'NY.GDP.MKTP.CD', name: 'GDP at market prices (current US$)' },
      values: [
        ...Array.from({ length: 12 }, (_, i) => ({ year: 2026 - i, value: null })),
        { year: 2014, value: 17419000000000 },
      ],
      last_updated: '2016-05-02',
    });
    expect(gdpLate.ok && indicatorResultSchema.safeParse(gdpLate.result).success).toBe(true);
  });

  it('answers years before the first column and gaps in the columns with null', () => {
    const gappy = new IndicatorStore([
      {
        indicatorId: 'X.Y.Z',
        indicatorName: 'Thing',
        lastUpdated: null,
        years: [1962, 1964],
        rows: [{ countryName: 'United States', countryCode: 'USA', wbId: 'US', values: [1, 2] }],
      },
    ]);
    const r = gappy.lookup(req('US', 'X.Y.Z', 1960, 1966), 2026);
    expect(r.ok && r.result.values).toEqual([
      { year: 1966, value: null },
      { year: 1965, value: null },
      { year: 1964, value: 2 },
      { year: 1963, value: null },
      { year: 1962, value: 1 },
      { year: 1961, value: null },
      { year: 1960, value: null },
    ]);
  });

  it('finds Kosovo by either alpha-3 in either vintage', () => {
    const a = store.lookup(req('XKX', 'NY.GDP.MKTP.CD', 2010, 2010), 2026);
    const b = store.lookup(req('KSV', 'SP.POP.TOTL', 2010, 2010), 2026);
    expect(a.ok && a.result.country.id).toBe('XK');
    expect(b.ok && b.result.country.id).toBe('XK');
  });

  it('reports unknown indicators and countries as parameter problems', () => {
    expect(store.lookup(req('USA', 'NO.SUCH.CODE'), 2026)).toEqual({
      ok: false,
      field: 'indicator',
      reason: 'unknown indicator NO.SUCH.CODE',
    });
    expect(store.lookup(req('QQ', 'SP.POP.TOTL'), 2026)).toMatchObject({ ok: false, field: 'country' });
    const noc = store.lookup(req('NOC', 'SP.POP.TOTL'), 2026);
    expect(noc).toMatchObject({ ok: false, field: 'country', reason: 'no SP.POP.TOTL series for NOC' });
  });
});

describe('indicator revisions', () => {
  const fresh = () => new IndicatorStore([gdp, pop, imr]);
  const usaPop = pop.rows.find((r) => r.countryCode === 'USA')!;
  const pop2015 = usaPop.values[pop.years.indexOf(2015)]!;

  it("changes one value and that series' last_updated, leaving the dataset and other series alone", () => {
    const s = fresh();
    expect(
      s.revise({ indicator: 'sp.pop.totl', country: 'USA', year: 2015, value: 1234, lastUpdated: '2026-01-15' }),
    ).toEqual({
      indicator: 'SP.POP.TOTL',
      country: 'US',
      year: 2015,
      before: pop2015,
      after: 1234,
      lastUpdated: '2026-01-15',
    });
    for (const code of ['US', 'USA']) {
      const r = s.lookup(req(code, 'SP.POP.TOTL', 2014, 2016), 2026);
      expect(r.ok && r.result.last_updated).toBe('2026-01-15');
      expect(r.ok && r.result.values![1]).toEqual({ year: 2015, value: 1234 });
      expect(r.ok && r.result.values![0]!.value).toBe(usaPop.values[pop.years.indexOf(2016)]);
    }
    const china = s.lookup(req('CHN', 'SP.POP.TOTL', 2015, 2015), 2026);
    expect(china.ok && china.result.last_updated).toBe('2018-01-25');
    const gdpUs = s.lookup(req('USA', 'NY.GDP.MKTP.CD', 2015, 2015), 2026);
    expect(gdpUs.ok && gdpUs.result.last_updated).toBe('2016-05-02');
    expect(usaPop.values[pop.years.indexOf(2015)]).toBe(pop2015);
    const untouched = fresh().lookup(req('USA', 'SP.POP.TOTL', 2015, 2015), 2026);
    expect(untouched.ok && untouched.result.values).toEqual([{ year: 2015, value: pop2015 }]);
  });

  it('fills a year without a column, can set null, and reports the revised value as before', () => {
    const s = fresh();
    expect(
      s.revise({ indicator: 'SP.POP.TOTL', country: '1W', year: 2024, value: 8e9, lastUpdated: 'A' }).before,
    ).toBeNull();
    expect(
      s.revise({ indicator: 'SP.POP.TOTL', country: 'WLD', year: 2024, value: null, lastUpdated: 'B' }).before,
    ).toBe(8e9);
    expect(
      s.revise({ indicator: 'SP.POP.TOTL', country: 'WLD', year: 2023, value: 7.9e9, lastUpdated: 'C' }).before,
    ).toBeNull();
    const r = s.lookup(req('WLD', 'SP.POP.TOTL', 2023, 2025), 2026);
    expect(r.ok && r.result).toMatchObject({
      values: [
        { year: 2025, value: null },
        { year: 2024, value: null },
        { year: 2023, value: 7.9e9 },
      ],
      last_updated: 'C',
    });
  });

  it('the running emulator dates the marker by its clock unless one is given', async () => {
    const emu = await startEmulator({
      key: 'k',
      events: [],
      indicators: [pop],
      now: () => new Date('2025-06-10T23:00:00Z'),
    });
    try {
      expect(emu.reviseIndicator({ indicator: 'SP.POP.TOTL', country: 'CN', year: 2020, value: 1.4e9 })).toEqual({
        indicator: 'SP.POP.TOTL',
        country: 'CN',
        year: 2020,
        before: null,
        after: 1.4e9,
        lastUpdated: '2025-06-10',
      });
      expect(
        emu.reviseIndicator({ indicator: 'SP.POP.TOTL', country: 'CN', year: 2020, value: 1, lastUpdated: 'r2' })
          .lastUpdated,
      ).toBe('r2');
      expect(() => emu.reviseIndicator({ indicator: 'NY.GDP.MKTP.CD', country: 'CN', year: 2020, value: 1 })).toThrow(
        RangeError,
      );
    } finally {
      await emu.close();
    }
  });

  it('rejects unknown series and bad values with a RangeError', () => {
    const s = fresh();
    const ok = { indicator: 'SP.POP.TOTL', country: 'USA', year: 2015, value: 1, lastUpdated: 'x' };
    expect(() => s.revise({ ...ok, indicator: 'NO.SUCH' })).toThrow(/indicator: unknown indicator NO\.SUCH/);
    expect(() => s.revise({ ...ok, country: 'QQ' })).toThrow(/country: unknown country/);
    expect(() => s.revise({ ...ok, year: 1959 })).toThrow(RangeError);
    expect(() => s.revise({ ...ok, year: 2015.5 })).toThrow(RangeError);
    expect(() => s.revise({ ...ok, value: Number.NaN })).toThrow(RangeError);
    expect(() => s.revise({ ...ok, lastUpdated: '' })).toThrow(RangeError);
    const r = s.lookup(req('USA', 'SP.POP.TOTL', 2015, 2015), 2026);
    expect(r.ok && r.result.values![0]!.value).toBe(pop2015);
  });
});
