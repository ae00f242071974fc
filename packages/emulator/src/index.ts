export { startEmulator } from './server.js';
export type { EmulatorCall, EmulatorOptions, RunningEmulator } from './types.js';
export { FAULT_KINDS, isFaultKind, type FaultKind, type FaultRule } from './faults.js';
export {
  EVENT_ORDERS,
  KEEP_ORDERS,
  keepOrderOf,
  selectByOrder,
  type EventOrder,
  type KeepOrder,
  type SelectionAccessors,
} from './selection.js';
export { BOUNDARIES, TIME_PRECISIONS, type AnswerBehaviour, type Boundary, type TimePrecision } from './behaviour.js';
export {
  SWARM_MAX_COUNT,
  SWARM_PLACE,
  SWARM_SPREADS,
  swarmEventId,
  swarmEvents,
  type SwarmSpec,
  type SwarmSpread,
} from './swarm.js';
export { OUTCOME, type Outcome } from './envelope.js';
export {
  LiveCatalog,
  checkLiveWindow,
  type LiveChange,
  type LiveChangeKind,
  type LiveCounts,
  type LiveWindow,
} from './live-catalog.js';
export { LIVE_MAX_PER_MINUTE, LIVE_TICK_MS, LiveCredit, resolveLiveSpec, type LiveSpec } from './live-timer.js';
export { MAX_TIME_SHIFT_MS, addedEvent, liveEventId, revisedEvent } from './live-events.js';
export {
  CatalogIndex,
  materialize,
  tileEventId,
  tileSpanMs,
  type EventQuery,
  type EventRef,
  type TileSpec,
} from './catalog-index.js';
export {
  eventPageUrl,
  loadUsgsCsv,
  loadUsgsFile,
  loadUsgsFiles,
  loadUsgsGeoJson,
  mergeEvents,
} from './usgs-catalog.js';
export { loadWorldBankCsv, loadWorldBankFile, type IndicatorDataset, type IndicatorRow } from './worldbank.js';
export { IndicatorStore, type IndicatorRevision, type IndicatorRevisionResult } from './indicator-store.js';
export { WB_ID_BY_ALPHA3, wbIdOf } from './country-codes.js';
export { bundledDataDir, bundledDataPaths, dataFolder } from './bundled-data.js';
export { USGS_SOURCE } from './operations.js';
export {
  EARTH_RADIUS_KM,
  EmulatorDataError,
  EmulatorUsageError,
  haversineKm,
  LIMITS,
  OPERATIONS,
  type EarthquakeEvent,
  type Operation,
} from './spec.js';
export { emulatorCommand, parseEmulatorArgs, runEmulatorCli, serveUntilSignal } from './cli.js';
export { createRng, deriveRng, sampleInRandomOrder, type Rng } from './rng.js';
