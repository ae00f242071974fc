/** Defaults and naming rules shared by the CLI and the validator, so both agree on one value. */
import { DAY_MS } from '../../gateway/time.js';

export const DEFAULT_JOBS_FILE = './jobs.yaml';
export const STREAM_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}$/i;
export const DEFAULT_LOOKBACK_MS = DAY_MS;
