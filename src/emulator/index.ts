export { startEmulator } from './server.js';
export type { EmulatorCall, EmulatorOptions, RunningEmulator } from './types.js';
export { FAULT_KINDS, isFaultKind, type FaultKind, type FaultRule } from './faults.js';
export { EVENT_ORDERS, selectByOrder, type EventOrder } from './selection.js';
export { OUTCOME, type Outcome } from './envelope.js';
export {
  CatalogIndex,
  materialize,
  tileEventId,
  tileSpanMs,
  type Circle,
  type EventQuery,
  type EventRef,
  type TileSpec,
} from './catalog-index.js';
export { EARTH_RADIUS_KM, haversineKm } from './geo.js';
export {
  eventPageUrl,
  loadUsgsCsv,
  loadUsgsFile,
  loadUsgsFiles,
  loadUsgsGeoJson,
  mergeEvents,
} from './usgs-catalog.js';
export { loadWorldBankCsv, loadWorldBankFile, type IndicatorDataset, type IndicatorRow } from './worldbank.js';
export { IndicatorStore } from './indicator-store.js';
export { WB_ID_BY_ALPHA3, wbIdOf } from './country-codes.js';
export { bundledFixtureDir, bundledFixturePaths } from './fixtures.js';
export { EmulatorDataError } from './data-error.js';
export { USGS_SOURCE } from './operations.js';
