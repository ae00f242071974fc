import { and, asc, count, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIndicatorFlags } from '../../src/cli/backfill-request.js';
import {
  countryCodeAliases,
  gatewayExecutions,
  indicatorCodeAliases,
  indicatorSeries,
  indicatorValueRevisions,
  indicatorValues,
} from '../../src/db/schema.js';
import {
  loadWorldBankFile,
  startEmulator,
  type IndicatorDataset,
  type RunningEmulator,
} from '@gateway-ingest/emulator';
import { enqueueIndicatorBackfill } from '../../src/ingest/enqueue-backfill.js';
import { streamFreshness } from '../../src/db/queries/freshness.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { UsageError, GatewayError } from '../../src/errors.js';

const KEY = 'test-key-indicators';
const NOW = () => new Date('2026-11-22T00:00:00Z');
const GDP = `${dataFolder}worldbank/API_NY.GDP.MKTP.CD_DS2_en_csv_v2.csv`;
const POP = `${dataFolder}worldbank/API_SP.POP.TOTL_DS2_en_csv_v2.csv`;
const REQUESTED = ['US', 'CHN', 'WLD', 'DEU', 'IND'];
const ALPHA3 = { US: 'USA', CHN: 'CHN', WLD: 'WLD', DEU: 'DEU', IND: 'IND' } as Record<string, string>;
const WB_ID = { US: 'US', CHN: 'CN', WLD: '1W', DEU: 'DE', IND: 'IN' } as Record<string, string>;

/** The file's cells for one country from 1960 to `toYear`, empty cells and years past the file as null. */
function cells(ds: IndicatorDataset, alpha3: string, toYear: number): Array<{ year: number; value: number | null }> {
  const row = ds.rows.find((r) => r.countryCode === alpha3)!;
  const years = Array.from({ length: toYear - 1960 + 1 }, (_, i) => 1960 + i);
  return years.map((year) => {
    const i = ds.years.indexOf(year);
    return { year, value: i < 0 ? null : (row.values[i] ?? null) };
  });
}

describe('indicator backfill of the real World Bank files', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;
  let gdp: IndicatorDataset;
  let pop: IndicatorDataset;

  beforeAll(async () => {
    [gdp, pop] = await Promise.all([loadWorldBankFile(GDP), loadWorldBankFile(POP)]);
    db = await createTestDatabase();
    emulator = await startEmulator({ key: KEY, earthquakeFiles: [], indicatorFiles: [GDP, POP], now: NOW });
    pipeline = startPipeline(db, emulator, KEY);
  });

  afterAll(async () => {
    await pipeline.close();
    await emulator.close();
    await db.drop();
  });

  it('stores exactly the files cells, nulls included, under the ids the gateway answers with', async () => {
    const flags = parseIndicatorFlags(
      { indicator: ['NY.GDP.MKTP.CD', 'SP.POP.TOTL'], country: REQUESTED, fromYear: '1960' },
      2026,
    );
    const summaries = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, { ...flags, refresh: false });
    expect(summaries).toHaveLength(10);
    expect(summaries.every((s) => s.planned === 1)).toBe(true);
    expect(await pipeline.run(summaries)).toEqual({ total: 10, done: 10, partial: 0, failed: 0 });

    for (const [ds, id] of [
      [gdp, 'NY.GDP.MKTP.CD'],
      [pop, 'SP.POP.TOTL'],
    ] as const) {
      for (const code of REQUESTED) {
        const rows = await db.db
          .select({ year: indicatorValues.year, value: indicatorValues.value })
          .from(indicatorValues)
          .where(and(eq(indicatorValues.indicatorId, id), eq(indicatorValues.countryId, WB_ID[code]!)))
          .orderBy(asc(indicatorValues.year));
        expect(rows).toEqual(cells(ds, ALPHA3[code]!, flags.toYear));
      }
    }
    const nulls = await db.db.select({ n: count() }).from(indicatorValues).where(eq(indicatorValues.countryId, '1W'));
    expect(nulls[0]!.n).toBeGreaterThan(0);
    const series = await db.db.select().from(indicatorSeries).where(eq(indicatorSeries.countryId, 'US'));
    expect(series.map((s) => s.lastUpdated).sort()).toEqual([gdp.lastUpdated, pop.lastUpdated].sort());
  });

  it('a refresh of a revised series updates the value and keeps the old one in indicator_value_revisions', async () => {
    const before = await db.db
      .select({ value: indicatorValues.value })
      .from(indicatorValues)
      .where(
        and(
          eq(indicatorValues.indicatorId, 'SP.POP.TOTL'),
          eq(indicatorValues.countryId, 'US'),
          eq(indicatorValues.year, 2016),
        ),
      );
    expect(before[0]!.value).not.toBeNull();
    const revised = emulator.reviseIndicator({ indicator: 'SP.POP.TOTL', country: 'US', year: 2016, value: 1 });
    const flags = parseIndicatorFlags({ indicator: ['SP.POP.TOTL'], country: ['US'], fromYear: '1960' }, 2026);
    const summaries = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, { ...flags, refresh: true });
    expect(await pipeline.run(summaries)).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    const after = await db.db
      .select({ value: indicatorValues.value })
      .from(indicatorValues)
      .where(
        and(
          eq(indicatorValues.indicatorId, 'SP.POP.TOTL'),
          eq(indicatorValues.countryId, 'US'),
          eq(indicatorValues.year, 2016),
        ),
      );
    expect(after[0]!.value).toBe(1);
    const history = await db.db
      .select()
      .from(indicatorValueRevisions)
      .where(eq(indicatorValueRevisions.countryId, 'US'));
    // Only the revised year changed: the other 66 years were read again and left as they were.
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({
      indicatorId: 'SP.POP.TOTL',
      year: 2016,
      oldValue: before[0]!.value,
      newValue: 1,
      lastUpdated: revised.lastUpdated,
    });
    const [audit] = await db.db
      .select()
      .from(gatewayExecutions)
      .where(eq(gatewayExecutions.id, history[0]!.executionId!));
    expect(audit?.billed).toBe(true);
    const series = await db.db
      .select()
      .from(indicatorSeries)
      .where(and(eq(indicatorSeries.indicatorId, 'SP.POP.TOTL'), eq(indicatorSeries.countryId, 'US')));
    expect(series[0]!.lastUpdated).toBe(revised.lastUpdated);
  });

  it('asking for USA after US (and 1W after WLD) updates the same series', async () => {
    const before = await db.db.select({ n: count() }).from(indicatorValues);
    const summaries = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, {
      indicators: ['SP.POP.TOTL'],
      countries: ['USA', '1W'],
      fromYear: 1960,
      toYear: 2026,
      refresh: false,
    });
    expect(await pipeline.run(summaries)).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    const after = await db.db.select({ n: count() }).from(indicatorValues);
    expect(after[0]!.n).toBe(before[0]!.n);
    const aliases = await db.db
      .select()
      .from(countryCodeAliases)
      .where(inArray(countryCodeAliases.requestedCode, ['US', 'USA', 'WLD', '1W']));
    expect(Object.fromEntries(aliases.map((a) => [a.requestedCode, a.countryId]))).toEqual({
      US: 'US',
      USA: 'US',
      WLD: '1W',
      '1W': '1W',
    });
    // Unchanged values were re-read, not rewritten.
    const rewritten = await db.db
      .select({ rows: gatewayExecutions.rowsWritten })
      .from(gatewayExecutions)
      .where(eq(gatewayExecutions.streamKey, summaries[0]!.streamKey));
    expect(rewritten.map((r) => r.rows)).toEqual([0]);
  });

  it('a stream naming its indicator in another case than the gateway finds its values: status shows their last year', async () => {
    const summaries = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, {
      indicators: ['ny.gdp.mktp.cd'],
      countries: ['US'],
      fromYear: 1960,
      toYear: 2026,
      refresh: false,
    });
    expect(await pipeline.run(summaries)).toEqual({ total: 1, done: 1, partial: 0, failed: 0 });
    const aliases = await db.db.select().from(indicatorCodeAliases);
    expect(Object.fromEntries(aliases.map((a) => [a.requestedCode, a.indicatorId]))).toMatchObject({
      'ny.gdp.mktp.cd': 'NY.GDP.MKTP.CD',
      'NY.GDP.MKTP.CD': 'NY.GDP.MKTP.CD',
    });
    // Looked up under the code the stream names alone, its values would not be found ("none yet" in status).
    const freshness = await streamFreshness(db.db);
    const lower = freshness.get(summaries[0]!.streamKey)!;
    const upper = [...freshness.entries()].find(
      ([k]) => k === summaries[0]!.streamKey.replace('ny.gdp.mktp.cd', 'NY.GDP.MKTP.CD'),
    );
    expect(lower.lastValueYear).not.toBeNull();
    expect(lower.lastValueYear).toBe(upper![1].lastValueYear);
  });

  it('an unknown country is a parameters failure, not retried, with the gateway message kept', async () => {
    const before = emulator.calls.length;
    const summaries = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, {
      indicators: ['SP.POP.TOTL'],
      countries: ['ZZZ'],
      fromYear: 2000,
      toYear: 2010,
      refresh: false,
    });
    expect(await pipeline.run(summaries)).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });
    expect(emulator.calls.length - before).toBe(1);
    const [audit] = await db.db
      .select()
      .from(gatewayExecutions)
      .where(eq(gatewayExecutions.streamKey, summaries[0]!.streamKey));
    expect(audit!.errorKind).toBe('parameters');
    expect(audit!.billed).toBe(false);
    expect(audit!.errorDetail).toMatch(/ZZZ/);
  });

  it('bad codes and years are refused before any call', async () => {
    const before = emulator.calls.length;
    expect(() => parseIndicatorFlags({ indicator: ['NY'], country: ['US'] }, 2026)).toThrow(/--indicator: "NY"/);
    expect(() => parseIndicatorFlags({ indicator: ['SP.POP.TOTL'], country: ['USAA'] }, 2026)).toThrow(
      /--country: "USAA"/,
    );
    expect(() => parseIndicatorFlags({ indicator: ['SP.POP.TOTL'], country: ['US'], fromYear: '1959' }, 2026)).toThrow(
      UsageError,
    );
    expect(() => parseIndicatorFlags({ indicator: ['SP.POP.TOTL'], country: ['US'], toYear: '2027' }, 2026)).toThrow(
      /--to-year/,
    );
    await expect(
      pipeline.gateway.queryIndicator({
        provider: 'development-indicators',
        country: 'US',
        indicator: 'SP.POP.TOTL',
        start_year: 1950,
        end_year: 2000,
      }),
    ).rejects.toThrow(GatewayError);
    expect(emulator.calls.length).toBe(before);
  });
});
