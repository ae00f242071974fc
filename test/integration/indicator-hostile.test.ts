import { createHash } from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { dataFolder, loadWorldBankFile, startEmulator, type IndicatorDataset } from '@gateway-ingest/emulator';
import { parseIndicatorFlags } from '../../src/cli/backfill-request.js';
import { countries, gatewayExecutions, indicators, indicatorValues, ingestPartitions } from '../../src/db/schema.js';
import { storableKey } from '../../src/domain/text.js';
import { enqueueIndicatorBackfill } from '../../src/ingest/enqueue-backfill.js';
import { planBackfill } from '../../src/ingest/plan.js';
import { startGatewayProxy } from '../support/gateway-proxy.js';
import { createTestDatabase } from '../support/isolation.js';
import { startPipeline } from '../support/pipeline.js';

/**
 * Gateways that leave years out of an indicator answer, which the spec does not forbid: one paging as
 * the World Bank API does (fifty values, the newest first), one leaving out the years without a value.
 * The years left out are asked again on their own: every year with a value is stored.
 */
const KEY = 'test-key-indicator-years';
const NOW = () => new Date('2026-11-22T00:00:00Z');
const GDP = `${dataFolder}worldbank/API_NY.GDP.MKTP.CD_DS2_en_csv_v2.csv`;
const SERIES = [
  ['US', 'USA', 'US'],
  ['CHN', 'CHN', 'CN'],
] as const;

type Values = Array<{ year: number; value: number | null }>;

function cells(ds: IndicatorDataset, alpha3: string): Values {
  const row = ds.rows.find((r) => r.countryCode === alpha3)!;
  return Array.from({ length: 2026 - 1960 + 1 }, (_, i) => 1960 + i).map((year) => {
    const at = ds.years.indexOf(year);
    return { year, value: at < 0 ? null : (row.values[at] ?? null) };
  });
}

/** The proxy's rewrite of every indicator answer's values. */
function rewriting(change: (values: Values) => Values) {
  return (body: string) => {
    const parsed = JSON.parse(body) as { data?: { result?: { values?: Values | null } } };
    const result = parsed.data?.result;
    if (result?.values) result.values = change(result.values);
    return JSON.stringify(parsed);
  };
}

async function backfillThrough(
  rewrite: (body: string) => string,
  indicatorId = 'NY.GDP.MKTP.CD',
  idOf = (id: string) => id,
) {
  const db = await createTestDatabase();
  const emulator = await startEmulator({ key: KEY, earthquakeFiles: [], indicatorFiles: [GDP], now: NOW });
  const proxy = await startGatewayProxy(emulator.url, rewrite);
  const pipeline = startPipeline(db, { ...emulator, url: proxy.url }, KEY);
  try {
    const flags = parseIndicatorFlags(
      { indicator: ['NY.GDP.MKTP.CD'], country: SERIES.map(([code]) => code), fromYear: '1960' },
      2026,
    );
    const summaries = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, { ...flags, refresh: false });
    const progress = await pipeline.run(summaries);
    const stored = async (countryId: string) =>
      db.db
        .select({ year: indicatorValues.year, value: indicatorValues.value })
        .from(indicatorValues)
        .where(and(eq(indicatorValues.indicatorId, indicatorId), eq(indicatorValues.countryId, idOf(countryId))))
        .orderBy(asc(indicatorValues.year));
    const rows: Record<string, Values> = {};
    for (const [, , id] of SERIES) rows[id] = await stored(id);
    const calls = (await db.db.select().from(gatewayExecutions)).map((c) => {
      const asked = c.request as { start_year: number; end_year: number };
      return { startYear: asked.start_year, endYear: asked.end_year, billed: c.billed };
    });
    const partitions = await db.db.select().from(ingestPartitions);
    const names = [...(await db.db.select().from(indicators)), ...(await db.db.select().from(countries))];
    // What `plan` now expects a third series to cost, from these reads.
    const third = parseIndicatorFlags({ indicator: ['NY.GDP.MKTP.CD'], country: ['WLD'], fromYear: '1960' }, 2026);
    const settings = { nowMs: NOW().getTime(), concurrency: 1, lanes: 1, gatewayKey: null, knowledgeTtlMs: 0 };
    const plan = await planBackfill(db.db, { operation: 'indicator', ...third, refresh: false }, settings);
    return { progress, rows, calls, partitions, names, planned: [plan.estimatedBilledCalls, plan.estimatedUnits] };
  } finally {
    await pipeline.close();
    await proxy.close();
    await emulator.close();
    await db.drop();
  }
}

describe('indicator answers that leave years out', () => {
  it('paged fifty values at a time, newest first: the older years are asked again, every cell stored', async () => {
    const gdp = await loadWorldBankFile(GDP);
    const r = await backfillThrough(rewriting((values) => values.slice(0, 50)));
    expect(r.progress).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    for (const [, alpha3, id] of SERIES) expect(r.rows[id]).toEqual(cells(gdp, alpha3));
    // Per series the chunk 1960..2026 and the 17 years its answer left out.
    expect(r.calls.map((c) => [c.startYear, c.endYear, c.billed]).sort()).toEqual(
      [
        [1960, 2026, true],
        [1960, 1976, true],
      ]
        .flatMap((c) => [c, c])
        .sort(),
    );
    expect(r.partitions.map((p) => [p.state, p.frontier])).toEqual([
      ['done', null],
      ['done', null],
    ]);
    // A chunk took two calls here, billed 67 + 17 points (the proxy keeps the units the emulator
    // reported): `plan` says so of the next series' chunk.
    expect(r.planned).toEqual([
      { low: 1, expected: 2, high: 2 },
      { low: 67, expected: 84, high: 84, unit: 'points' },
    ]);
  });

  it('leaving out the years without a value: each run of them asked once more, every value stored', async () => {
    const gdp = await loadWorldBankFile(GDP);
    const r = await backfillThrough(rewriting((values) => values.filter((v) => v.value !== null)));
    expect(r.progress).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    for (const [, alpha3, id] of SERIES) expect(r.rows[id]).toEqual(cells(gdp, alpha3).filter((v) => v.value !== null));
    // Per series the chunk, then the one run it left out: the years after its last value (the file's
    // last column, 2015, is empty too), whose answer holds nothing.
    const after = (alpha3: string) =>
      Math.max(...cells(gdp, alpha3).flatMap((v) => (v.value === null ? [] : [v.year])));
    expect(r.calls.map((c) => [c.startYear, c.endYear]).sort()).toEqual(
      [...SERIES.map(() => [1960, 2026]), ...SERIES.map(([, alpha3]) => [after(alpha3) + 1, 2026])].sort(),
    );
  });
});

describe('indicator answers whose indicator and country ids are longer than an index entry holds', () => {
  it('store the values under the digests of the ids, the ids whole beside them', async () => {
    // Digits no compression shortens: a compressed entry of a repetitive id would fit the index.
    const digits = Array.from({ length: 63 }, (_, i) => createHash('sha256').update(String(i)).digest('hex')).join('');
    const long = (id: string) => `${id}.${digits}`;
    const rewrite = (body: string) => {
      const parsed = JSON.parse(body) as { data?: { result?: { indicator: { id: string }; country: { id: string } } } };
      const result = parsed.data?.result;
      if (result) {
        result.indicator.id = long(result.indicator.id);
        result.country.id = long(result.country.id);
      }
      return JSON.stringify(parsed);
    };
    const gdp = await loadWorldBankFile(GDP);
    const key = (id: string) => storableKey(long(id));
    const r = await backfillThrough(rewrite, key('NY.GDP.MKTP.CD'), key);
    expect(r.progress).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    for (const [, alpha3, id] of SERIES) expect(r.rows[id]).toEqual(cells(gdp, alpha3));
    expect(r.names.map((n) => [n.id, n.fullId]).sort()).toEqual(
      ['NY.GDP.MKTP.CD', ...SERIES.map(([, , id]) => id)].map((id) => [key(id), long(id)]).sort(),
    );
  });
});
