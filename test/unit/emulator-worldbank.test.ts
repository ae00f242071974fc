import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { indicatorResultSchema } from '../../src/gateway/schemas.js';
import { WB_ID_BY_ALPHA3, wbIdOf } from '../../src/emulator/country-codes.js';
import { bundledFixtureDir } from '../../src/emulator/fixtures.js';
import { IndicatorStore } from '../../src/emulator/indicator-store.js';
import { loadWorldBankCsv, loadWorldBankFile } from '../../src/emulator/worldbank.js';

const wb = (name: string) => join(bundledFixtureDir(), 'worldbank', name);
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
    expect([id('USA'), id('CHN'), id('WLD'), id('EUU'), id('XKX'), id('CHI')]).toEqual(['US', 'CN', '1W', 'EU', 'XK', 'JG']);
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
    const aggregates = { WLD: '1W', EUU: 'EU', HIC: 'XD', LMY: 'XO', ARB: '1A', EAP: '4E', TEA: 'T4', SAS: '8S', INX: 'XY', OED: 'OE' };
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

  it('uses the default years and returns only year columns present in the file', () => {
    const r = store.lookup(req('USA', 'SP.POP.TOTL'), 2016);
    expect(r.ok && r.result.values!.map((v) => v.year)).toEqual([2016, 2015, 2014, 2013, 2012, 2011, 2010, 2009, 2008, 2007]);
    const late = store.lookup(req('USA', 'SP.POP.TOTL'), 2026);
    expect(late.ok && late.result.values).toEqual([{ year: 2017, value: null }]);
    const gdpLate = store.lookup(req('USA', 'NY.GDP.MKTP.CD', 2014, 2026), 2026);
    expect(gdpLate.ok && gdpLate.result).toMatchObject({
      indicator: { id: 'NY.GDP.MKTP.CD', name: 'GDP at market prices (current US$)' },
      values: [
        { year: 2015, value: null },
        { year: 2014, value: 17419000000000 },
      ],
      last_updated: '2016-05-02',
    });
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
