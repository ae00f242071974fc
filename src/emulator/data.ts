import { CatalogIndex } from './catalog-index.js';
import { bundledFixturePaths } from './fixtures.js';
import { IndicatorStore } from './indicator-store.js';
import type { EmulatorOptions } from './types.js';
import { loadUsgsFiles } from './usgs-catalog.js';
import { loadWorldBankFile } from './worldbank.js';

export interface EmulatorData {
  catalog: CatalogIndex;
  indicators: IndicatorStore;
}

/** Preloaded data wins over file lists, which win over the bundled fixtures. */
export async function loadEmulatorData(options: EmulatorOptions): Promise<EmulatorData> {
  const needBundled = (!options.events && !options.earthquakeFiles) || (!options.indicators && !options.indicatorFiles);
  const bundled = needBundled ? bundledFixturePaths() : { earthquakeFiles: [], indicatorFiles: [] };
  const [events, datasets] = await Promise.all([
    options.events ?? loadUsgsFiles(options.earthquakeFiles ?? bundled.earthquakeFiles),
    options.indicators ?? Promise.all((options.indicatorFiles ?? bundled.indicatorFiles).map(loadWorldBankFile)),
  ]);
  return { catalog: new CatalogIndex(events, options.tile), indicators: new IndicatorStore(datasets) };
}
