import type { IndicatorRequest, IndicatorResult } from './spec.js';
import { LIMITS } from './spec.js';
import { wbIdOf } from './country-codes.js';
import type { IndicatorDataset, IndicatorRow } from './worldbank.js';

export const WORLD_BANK_SOURCE_NAME = 'World Bank, World Development Indicators';

export type IndicatorLookup =
  { ok: true; result: IndicatorResult } | { ok: false; field: 'indicator' | 'country'; reason: string };

/** A change to one value of one series (indicator x country), as the World Bank publishes them. */
export interface IndicatorRevision {
  indicator: string;
  /** Any code the query accepts: alpha-2, alpha-3 or World Bank id. */
  country: string;
  year: number;
  value: number | null;
  /** The series' new `last_updated` marker. */
  lastUpdated: string;
}

/** What a revision changed, with the ids the gateway answers with. */
export interface IndicatorRevisionResult {
  indicator: string;
  country: string;
  year: number;
  before: number | null;
  after: number | null;
  lastUpdated: string;
}

interface Dataset {
  data: IndicatorDataset;
  columnOf: Map<number, number>;
}

interface SeriesRevisions {
  values: Map<number, number | null>;
  lastUpdated: string;
}

type Found =
  { ok: true; dataset: Dataset; row: IndicatorRow } | { ok: false; field: 'indicator' | 'country'; reason: string };

/**
 * Indicator datasets keyed by code; answers one request the way the gateway shapes it (spec 2.4).
 * Revisions are kept beside the datasets, never written into them, since callers may share them.
 */
export class IndicatorStore {
  private readonly byId = new Map<string, Dataset>();
  private readonly revisions = new Map<string, SeriesRevisions>();

  constructor(datasets: readonly IndicatorDataset[]) {
    // Indicator codes are case-insensitive upstream; a later file for the same code replaces an earlier one.
    for (const d of datasets) {
      this.byId.set(d.indicatorId.toUpperCase(), { data: d, columnOf: new Map(d.years.map((y, i) => [y, i])) });
    }
  }

  get indicatorIds(): string[] {
    return [...this.byId.values()].map((d) => d.data.indicatorId);
  }

  /**
   * Every year from start_year to end_year, newest first, as the live World Bank API answers:
   * `value: null` where the file has an empty cell or no column for the year.
   */
  lookup(req: IndicatorRequest, currentYear: number): IndicatorLookup {
    const found = this.find(req.indicator, req.country);
    if (!found.ok) return found;
    const { dataset, row } = found;
    const revised = this.revisions.get(seriesKey(dataset, row));
    const endYear = req.end_year ?? currentYear;
    const startYear = req.start_year ?? endYear - 9;
    const values: { year: number; value: number | null }[] = [];
    for (let year = endYear; year >= startYear; year--) {
      const value = revised?.values.has(year) ? (revised.values.get(year) ?? null) : fileValue(dataset, row, year);
      values.push({ year, value });
    }
    return {
      ok: true,
      result: {
        indicator: { id: dataset.data.indicatorId, name: dataset.data.indicatorName },
        country: { id: row.wbId, name: row.countryName },
        values,
        last_updated: revised?.lastUpdated ?? dataset.data.lastUpdated,
        source: {
          name: WORLD_BANK_SOURCE_NAME,
          license: 'CC BY 4.0',
          url: `https://data.worldbank.org/indicator/${dataset.data.indicatorId}`,
        },
      },
    };
  }

  /** Changes one value and the series' marker; RangeError for an unknown series or a bad value. */
  revise(r: IndicatorRevision): IndicatorRevisionResult {
    const found = this.find(r.indicator, r.country);
    if (!found.ok) throw new RangeError(`reviseIndicator: ${found.field}: ${found.reason}`);
    if (!(Number.isInteger(r.year) && r.year >= LIMITS.firstYear)) {
      throw new RangeError(`reviseIndicator: year must be a whole number >= ${LIMITS.firstYear}, got ${r.year}`);
    }
    if (!(r.value === null || (typeof r.value === 'number' && Number.isFinite(r.value)))) {
      throw new RangeError(`reviseIndicator: value must be a finite number or null, got ${r.value}`);
    }
    if (typeof r.lastUpdated !== 'string' || r.lastUpdated === '') {
      throw new RangeError('reviseIndicator: lastUpdated must be a non-empty string');
    }
    const { dataset, row } = found;
    const key = seriesKey(dataset, row);
    const series = this.revisions.get(key) ?? { values: new Map<number, number | null>(), lastUpdated: r.lastUpdated };
    const before = series.values.has(r.year) ? (series.values.get(r.year) ?? null) : fileValue(dataset, row, r.year);
    series.values.set(r.year, r.value);
    series.lastUpdated = r.lastUpdated;
    this.revisions.set(key, series);
    return {
      indicator: dataset.data.indicatorId,
      country: row.wbId,
      year: r.year,
      before,
      after: r.value,
      lastUpdated: r.lastUpdated,
    };
  }

  private find(indicator: string, country: string): Found {
    const dataset = this.byId.get(indicator.toUpperCase());
    if (!dataset) return { ok: false, field: 'indicator', reason: `unknown indicator ${indicator}` };
    const row = findRow(dataset.data, country);
    if (row) return { ok: true, dataset, row };
    const reason =
      wbIdOf(country) === null
        ? `unknown country or aggregate code ${country}`
        : `no ${dataset.data.indicatorId} series for ${country}`;
    return { ok: false, field: 'country', reason };
  }
}

function seriesKey(dataset: Dataset, row: IndicatorRow): string {
  return `${dataset.data.indicatorId.toUpperCase()}|${row.countryCode}`;
}

function fileValue(dataset: Dataset, row: IndicatorRow, year: number): number | null {
  const column = dataset.columnOf.get(year);
  return column === undefined ? null : (row.values[column] ?? null);
}

/** The file's own code first, then the World Bank id (KSV and XKX both reach Kosovo's XK row). */
function findRow(dataset: IndicatorDataset, code: string): IndicatorRow | undefined {
  const upper = code.toUpperCase();
  const direct = dataset.rows.find((r) => r.countryCode === upper);
  if (direct) return direct;
  const wbId = wbIdOf(upper);
  return wbId === null ? undefined : dataset.rows.find((r) => r.wbId === wbId);
}
