import type { IndicatorRequest, IndicatorResult } from '../gateway/schemas.js';
import { wbIdOf } from './country-codes.js';
import type { IndicatorDataset, IndicatorRow } from './worldbank.js';

export const WORLD_BANK_SOURCE_NAME = 'World Bank, World Development Indicators';

export type IndicatorLookup =
  | { ok: true; result: IndicatorResult }
  | { ok: false; field: 'indicator' | 'country'; reason: string };

/** Indicator datasets keyed by code; answers one request the way the gateway shapes it (spec 2.4). */
export class IndicatorStore {
  private readonly byId = new Map<string, IndicatorDataset>();

  constructor(datasets: readonly IndicatorDataset[]) {
    // Indicator codes are case-insensitive upstream; a later file for the same code replaces an earlier one.
    for (const d of datasets) this.byId.set(d.indicatorId.toUpperCase(), d);
  }

  get indicatorIds(): string[] {
    return [...this.byId.values()].map((d) => d.indicatorId);
  }

  lookup(req: IndicatorRequest, currentYear: number): IndicatorLookup {
    const dataset = this.byId.get(req.indicator.toUpperCase());
    if (!dataset) return { ok: false, field: 'indicator', reason: `unknown indicator ${req.indicator}` };
    const row = findRow(dataset, req.country);
    if (!row) {
      const reason =
        wbIdOf(req.country) === null
          ? `unknown country or aggregate code ${req.country}`
          : `no ${dataset.indicatorId} series for ${req.country}`;
      return { ok: false, field: 'country', reason };
    }
    const endYear = req.end_year ?? currentYear;
    const startYear = req.start_year ?? endYear - 9;
    const values: { year: number; value: number | null }[] = [];
    for (let i = dataset.years.length - 1; i >= 0; i--) {
      const year = dataset.years[i] as number;
      if (year >= startYear && year <= endYear) values.push({ year, value: row.values[i] ?? null });
    }
    return {
      ok: true,
      result: {
        indicator: { id: dataset.indicatorId, name: dataset.indicatorName },
        country: { id: row.wbId, name: row.countryName },
        values,
        last_updated: dataset.lastUpdated,
        source: {
          name: WORLD_BANK_SOURCE_NAME,
          license: 'CC BY 4.0',
          url: `https://data.worldbank.org/indicator/${dataset.indicatorId}`,
        },
      },
    };
  }
}

/** The file's own code first, then the World Bank id (KSV and XKX both reach Kosovo's XK row). */
function findRow(dataset: IndicatorDataset, code: string): IndicatorRow | undefined {
  const upper = code.toUpperCase();
  const direct = dataset.rows.find((r) => r.countryCode === upper);
  if (direct) return direct;
  const wbId = wbIdOf(upper);
  return wbId === null ? undefined : dataset.rows.find((r) => r.wbId === wbId);
}
