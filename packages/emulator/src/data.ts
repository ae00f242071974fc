import type { EarthquakeEvent } from './spec.js';
import { bundledDataPaths } from './bundled-data.js';
import { IndicatorStore } from './indicator-store.js';
import { swarmEvents, type SwarmSpec } from './swarm.js';
import type { EmulatorOptions } from './types.js';
import { loadUsgsFiles, mergeEvents } from './usgs-catalog.js';
import { loadWorldBankFile } from './worldbank.js';

export interface EmulatorData {
  /** The loaded catalog without swarms, kept so that swarms can be replaced at run time. */
  events: EarthquakeEvent[];
  indicators: IndicatorStore;
}

/** Preloaded data wins over file lists, which win over the bundled fixtures. */
export async function loadEmulatorData(options: EmulatorOptions): Promise<EmulatorData> {
  const needBundled = (!options.events && !options.earthquakeFiles) || (!options.indicators && !options.indicatorFiles);
  const bundled = needBundled ? bundledDataPaths() : { earthquakeFiles: [], indicatorFiles: [] };
  const [events, datasets] = await Promise.all([
    options.events ?? loadUsgsFiles(options.earthquakeFiles ?? bundled.earthquakeFiles),
    options.indicators ?? Promise.all((options.indicatorFiles ?? bundled.indicatorFiles).map(loadWorldBankFile)),
  ]);
  return { events, indicators: new IndicatorStore(datasets) };
}

/** File events plus swarm events, merged like files (an id already present keeps its first copy). */
export function sourceEvents(
  events: readonly EarthquakeEvent[],
  swarms: readonly SwarmSpec[],
  seed: number,
): EarthquakeEvent[] {
  return swarms.length === 0 ? events.slice() : mergeEvents([events, ...swarms.map((s) => swarmEvents(s, seed))]);
}
