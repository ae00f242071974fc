import { dataFolder } from '@gateway-ingest/emulator';

/** The real month every scenario backfills: 9,366 USGS events, 2025-05-06 .. 2025-06-05. */
export const MONTH_FILE = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;

/** Two 31-day windows over the whole file; the emulator's clock puts them in the past. */
export const BACKFILL_ARGS = ['--from', '2025-05-01', '--to', '2025-06-10'];
export const NOW = (): Date => new Date('2025-07-01T00:00:00Z');
