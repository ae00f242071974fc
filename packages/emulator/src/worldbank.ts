import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { wbIdOf } from './country-codes.js';
import { EmulatorDataError } from './spec.js';
import { numberOrNull } from './cells.js';

export interface IndicatorRow {
  countryName: string;
  /** The code as written in the file (alpha-3 or aggregate code). */
  countryCode: string;
  /** The live API's 2-character id; the file's own code when the table does not know it. */
  wbId: string;
  /** Aligned with `IndicatorDataset.years`; null where the cell is empty. */
  values: (number | null)[];
}

export interface IndicatorDataset {
  indicatorId: string;
  indicatorName: string;
  /** The preamble's "Last Updated Date", verbatim. */
  lastUpdated: string | null;
  /** Year columns present in the file, ascending. */
  years: number[];
  rows: IndicatorRow[];
}

/**
 * World Bank bulk CSV (`API_<indicator>_DS2_en_csv_v2.csv`): BOM, a short preamble of key/value
 * lines, then the header row. The header is found by its first two cells rather than by line
 * number, so a preamble with one line more or less still loads.
 */
export function loadWorldBankCsv(text: string): IndicatorDataset {
  const records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true });
  const headerAt = records.findIndex((r) => r[0] === 'Country Name' && r[1] === 'Country Code');
  if (headerAt < 0) throw new EmulatorDataError('World Bank CSV: no "Country Name","Country Code" header');
  const lastUpdated = records.slice(0, headerAt).find((r) => r[0] === 'Last Updated Date')?.[1] || null;
  const header = records[headerAt] as string[];
  // The trailing comma of every line yields an empty last column: only 4-digit headers are years.
  const yearCols = header.flatMap((h, i) => (/^\d{4}$/.test(h) ? [{ year: Number(h), i }] : []));
  yearCols.sort((a, b) => a.year - b.year);
  let indicatorId = '';
  let indicatorName = '';
  const rows = records.slice(headerAt + 1).map((r, n): IndicatorRow => {
    const [countryName = '', countryCode = '', name = '', id = ''] = r;
    if (countryCode === '' || id === '')
      throw new EmulatorDataError(`World Bank CSV row ${n + 1}: no country or indicator code`);
    if (indicatorId === '') [indicatorId, indicatorName] = [id, name];
    else if (id !== indicatorId)
      throw new EmulatorDataError(`World Bank CSV: more than one indicator (${indicatorId}, ${id})`);
    return {
      countryName,
      countryCode,
      wbId: wbIdOf(countryCode) ?? countryCode,
      values: yearCols.map(({ year, i }) => numberOrNull(r[i] ?? '', `World Bank CSV ${countryCode} ${year}`)),
    };
  });
  if (indicatorId === '') throw new EmulatorDataError('World Bank CSV: no data rows');
  return { indicatorId, indicatorName, lastUpdated, years: yearCols.map((c) => c.year), rows };
}

export async function loadWorldBankFile(path: string): Promise<IndicatorDataset> {
  try {
    return loadWorldBankCsv(await readFile(path, 'utf8'));
  } catch (err) {
    throw new EmulatorDataError(`${path}: ${(err as Error).message}`);
  }
}
