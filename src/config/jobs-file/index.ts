/**
 * jobs.yaml: the streams the pipeline ingests (see "jobs.yaml" in README.md).
 *
 * The file is parsed ONCE into a resolved, typed value. Every rule of the gateway spec (parts 4 and 8)
 * is applied at load, so a stream that loads can always be planned into valid gateway requests.
 * An invalid file is refused as a whole, with every problem listed as `file:line  path: reason`.
 */
import { readFile } from 'node:fs/promises';
import { resolveEarthquake } from './earthquake-stream.js';
import { resolveIndicator } from './indicator-stream.js';
import { describe, errorMap } from './messages.js';
import type { RawProblem } from './problem-path.js';
import { isRecord } from './raw-document.js';
import { refuse, zodProblems } from './refusal.js';
import { jobsFileSchema } from './schema.js';
import { crossFieldProblems } from './stream-rules.js';
import { JobsFileError, type ResolvedJobsFile } from './types.js';
import { readYaml } from './yaml-source.js';

export { formatDurationMs, parseDurationMs } from '../durations.js';
export { DEFAULT_JOBS_FILE, DEFAULT_LOOKBACK_MS, STREAM_NAME_PATTERN } from './constants.js';
export { formatPath } from './problem-path.js';
export {
  JobsFileError,
  formatJobsFileProblem,
  type EarthquakeStreamConfig,
  type IndicatorStreamConfig,
  type JobsFileProblem,
  type ResolvedJobsFile,
  type Schedule,
} from './types.js';

/**
 * Parse and validate the text of a jobs file. Pure: `now` decides "not in the future" and
 * "the current year". Throws JobsFileError listing every problem.
 */
export function parseJobsFile(text: string, file: string, now: () => Date = () => new Date()): ResolvedJobsFile {
  const clock = now();
  const { doc, at, broken, duplicates } = readYaml(text);
  const problems: RawProblem[] = [...broken];
  // Past a syntax error the tree is guesswork: checking its values would only add noise.
  if (problems.length > 0) refuse(file, [...problems, ...duplicates]);
  // Duplicate keys are listed with every other problem; validation below sees the last value.
  problems.push(...duplicates);

  let root: unknown;
  try {
    root = doc.toJS(); // throws on an alias bomb (more than 100 alias expansions)
  } catch (error) {
    const reason = `YAML error: ${error instanceof Error ? error.message : String(error)}`;
    refuse(file, [...problems, { path: [], line: 1, reason }]);
  }
  if (root === null || root === undefined) {
    const reason = 'the file is empty: declare at least one stream under earthquakes or indicators';
    refuse(file, [...problems, { path: [], line: 1, reason }]);
  }
  if (!isRecord(root)) {
    const reason = `must be a mapping with the keys earthquakes and/or indicators, got ${describe(root)}`;
    refuse(file, [...problems, { path: [], line: at.lineOf([]), reason }]);
  }

  const parsed = jobsFileSchema(clock).safeParse(root, { error: errorMap, reportInput: true });
  if (!parsed.success) problems.push(...zodProblems(parsed.error.issues, at));
  problems.push(...crossFieldProblems(root, at, clock));
  if (problems.length > 0 || !parsed.success) refuse(file, problems);
  return {
    path: file,
    earthquakes: (parsed.data.earthquakes ?? []).map(resolveEarthquake),
    indicators: (parsed.data.indicators ?? []).map(resolveIndicator),
  };
}

/** Read and parse a jobs file; a file that cannot be read is a JobsFileError naming the path. */
export async function loadJobsFile(path: string, now: () => Date = () => new Date()): Promise<ResolvedJobsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    const reason =
      code === 'ENOENT'
        ? 'jobs file not found: create it (see "jobs.yaml" in README.md) or pass --config PATH'
        : code === 'EISDIR'
          ? 'is a directory, not a jobs file'
          : code === 'EACCES'
            ? 'cannot read the jobs file: permission denied'
            : `cannot read the jobs file: ${error instanceof Error ? error.message : String(error)}`;
    throw new JobsFileError([{ file: path, line: 0, path: '', reason }]);
  }
  return parseJobsFile(text, path, now);
}
