/**
 * The resolved, typed value a valid jobs file becomes, and the error an invalid one raises.
 * Kept free of parsing code so consumers of the resolved value pull in no YAML or zod.
 */
import { UsageError } from '../../cli/exit.js';

export type Schedule =
  | { kind: 'cron'; pattern: string; timezone: string | null }
  | { kind: 'every'; everyMs: number };

export interface EarthquakeStreamConfig {
  name: string;
  minMagnitude: number | null;
  circle: { latitude: number; longitude: number; radiusKm: number } | null;
  schedule: Schedule;
  lookbackMs: number;
  backfillFrom: Date | null;
  enabled: boolean;
}

export interface IndicatorStreamConfig {
  name: string;
  indicators: string[];
  countries: string[];
  fromYear: number | null;
  toYear: number | null;
  schedule: Schedule;
  enabled: boolean;
}

export interface ResolvedJobsFile {
  path: string;
  earthquakes: EarthquakeStreamConfig[];
  indicators: IndicatorStreamConfig[];
}

/**
 * One problem of an invalid file. `line` is 1-based: the line of the offending value, or of the
 * parent key when the value is missing; 0 when the file itself could not be read (then `path` is '').
 * `path` is like `earthquakes[1].circle.radius_km`, `(root)` for the document as a whole.
 */
export interface JobsFileProblem {
  file: string;
  line: number;
  path: string;
  reason: string;
}

export function formatJobsFileProblem(p: JobsFileProblem): string {
  if (p.line === 0 && p.path === '') return `${p.file}: ${p.reason}`;
  return `${p.file}:${p.line}  ${p.path}: ${p.reason}`;
}

/** The whole file is refused; `message` lists every problem, one per line. Exit code 2. */
export class JobsFileError extends UsageError {
  readonly problems: JobsFileProblem[];

  constructor(problems: JobsFileProblem[]) {
    super(problems.map(formatJobsFileProblem).join('\n'));
    this.problems = problems;
  }
}
