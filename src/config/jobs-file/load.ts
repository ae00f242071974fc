/**
 * jobs.yaml: the streams the pipeline ingests (see docs/jobs-yaml.md).
 *
 * The file is parsed ONCE into a resolved, typed value. Every rule of the gateway spec (parts 4 and 8)
 * is applied at load, so a stream that loads can always be planned into valid gateway requests.
 * An invalid file is refused as a whole, with every problem listed as `file:line  path: reason`.
 */
import { readFile } from 'node:fs/promises';
import type * as z from 'zod';
import { UsageError } from '../../errors.js';
import { describe, errorMap, formatPath, isRecord, unknownKeyReason } from './messages.js';
import type { RawProblem, Segment } from './messages.js';
import {
  allowedKeysAt,
  crossFieldProblems,
  jobsFileSchema,
  resolveStreams,
  type EarthquakeStreamConfig,
  type IndicatorStreamConfig,
} from './streams.js';
import { readYaml, type Locator, type YamlDoc } from './yaml.js';

export { DEFAULT_JOBS_FILE } from './default-path.js';

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

/** Read and parse a jobs file; a file that cannot be read is a JobsFileError naming the path. */
export async function loadJobsFile(path: string, now: () => Date = () => new Date()): Promise<ResolvedJobsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new JobsFileError([{ file: path, line: 0, path: '', reason: unreadableReason(error) }]);
  }
  return parseJobsFile(text, path, now);
}

/**
 * Parse and validate the text of a jobs file. Pure: `now` decides "not in the future" and
 * "the current year". Throws JobsFileError listing every problem.
 */
export function parseJobsFile(text: string, file: string, now: () => Date = () => new Date()): ResolvedJobsFile {
  const clock = now();
  const { doc, at, broken, duplicates } = readYaml(text);
  // Past a syntax error the tree is guesswork: checking its values would only add noise.
  if (broken.length > 0) refuse(file, [...broken, ...duplicates]);
  // Duplicate keys are listed with every other problem; validation below sees the last value.
  const problems: RawProblem[] = [...duplicates];

  const read = rootOf(doc, at);
  if ('problem' in read) refuse(file, [...problems, read.problem]);
  const { root } = read;

  const parsed = jobsFileSchema(clock).safeParse(root, { error: errorMap, reportInput: true });
  if (!parsed.success) problems.push(...zodProblems(parsed.error.issues, at));
  problems.push(...crossFieldProblems(root, at, clock));
  if (problems.length > 0 || !parsed.success) refuse(file, problems);
  return { path: file, ...resolveStreams(parsed.data) };
}

/** Why the file could not be read, worded as what to do about it where there is something to do. */
function unreadableReason(error: unknown): string {
  const code = error instanceof Error && 'code' in error ? String(error.code) : '';
  if (code === 'ENOENT') return 'jobs file not found: create it (see docs/jobs-yaml.md) or pass --config PATH';
  if (code === 'EISDIR') return 'is a directory, not a jobs file';
  if (code === 'EACCES') return 'cannot read the jobs file: permission denied';
  return `cannot read the jobs file: ${messageOf(error)}`;
}

/** The document as plain JS, or the one problem that stops it being read as a jobs file at all. */
function rootOf(doc: YamlDoc, at: Locator): { root: Record<string, unknown> } | { problem: RawProblem } {
  let root: unknown;
  try {
    root = doc.toJS(); // throws on an alias bomb (more than 100 alias expansions)
  } catch (error) {
    return { problem: { path: [], line: 1, reason: `YAML error: ${messageOf(error)}` } };
  }
  if (root === null || root === undefined) {
    const reason = 'the file is empty: declare at least one stream under earthquakes or indicators';
    return { problem: { path: [], line: 1, reason } };
  }
  if (!isRecord(root)) {
    const reason = `must be a mapping with the keys earthquakes and/or indicators, got ${describe(root)}`;
    return { problem: { path: [], line: at.lineOf([]), reason } };
  }
  return { root };
}

function zodProblems(issues: readonly z.core.$ZodIssue[], at: Locator): RawProblem[] {
  const problems: RawProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((s): s is Segment => typeof s === 'string' || typeof s === 'number');
    if (issue.code === 'unrecognized_keys') {
      // One problem per key, each on its own line, rather than one issue for the whole mapping.
      const allowed = allowedKeysAt(path);
      for (const key of issue.keys) {
        const keyPath = [...path, key];
        const line = at.lineOf(keyPath, { key: true });
        problems.push({ path: keyPath, line, reason: unknownKeyReason(key, allowed) });
      }
    } else if (issue.code === 'invalid_format' && typeof issue.input === 'string') {
      // The code rules of domain/filters.ts say what is allowed; add what was found.
      problems.push({ path, line: at.lineOf(path), reason: `${issue.message}, got ${describe(issue.input)}` });
    } else {
      problems.push({ path, line: at.lineOf(path), reason: issue.message });
    }
  }
  return problems;
}

/** Problems in file order; one cause reached by two rules is listed once. */
function refuse(file: string, raw: RawProblem[]): never {
  const unique = new Map<string, JobsFileProblem>();
  raw
    .map((p, order) => ({ ...p, order }))
    .sort((a, b) => a.line - b.line || a.order - b.order)
    .forEach((p) => {
      const problem = { file, line: p.line, path: formatPath(p.path), reason: p.reason };
      unique.set(formatJobsFileProblem(problem), problem);
    });
  throw new JobsFileError([...unique.values()]);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
