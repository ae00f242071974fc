/**
 * The jobs.yaml loader's public face; the code lives in ./jobs-file/ (load, yaml, streams, refresh,
 * schedule, messages).
 */
export { formatDurationMs, parseDurationMs } from './durations.js';
export {
  DEFAULT_JOBS_FILE,
  JobsFileError,
  formatJobsFileProblem,
  loadJobsFile,
  parseJobsFile,
  type JobsFileProblem,
  type ResolvedJobsFile,
} from './jobs-file/load.js';
export { formatPath } from './jobs-file/messages.js';
export { REFRESH_LIMITS, type RefreshTier } from './jobs-file/refresh.js';
export {
  CRON_AVERAGE_DAYS,
  eventsPerDay,
  projectEarthquakeStream,
  projectIndicatorStream,
  projectionTotal,
  runsPerDay,
  type DensitySample,
  type EarthquakeProjection,
  type IndicatorProjection,
  type ProjectionTotal,
  type StreamProjection,
  type TierProjection,
} from './jobs-file/projection.js';
export { type Schedule } from './jobs-file/schedule.js';
export {
  DEFAULT_LOOKBACK_MS,
  STREAM_NAME_PATTERN,
  type EarthquakeStreamConfig,
  type IndicatorStreamConfig,
} from './jobs-file/streams.js';
