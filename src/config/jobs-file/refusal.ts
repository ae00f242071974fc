/** Turning raw problems (zod issues, rule reports) into the one JobsFileError the caller sees. */
import type { z } from 'zod';
import type { Locator } from './locator.js';
import { describe, unknownKeyReason } from './messages.js';
import { formatPath, type RawProblem, type Segment } from './problem-path.js';
import { allowedKeysAt } from './schema.js';
import { JobsFileError, formatJobsFileProblem, type JobsFileProblem } from './types.js';

export function zodProblems(issues: readonly z.core.$ZodIssue[], at: Locator): RawProblem[] {
  const problems: RawProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((s): s is Segment => typeof s === 'string' || typeof s === 'number');
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeysAt(path);
      for (const key of issue.keys) {
        const keyPath = [...path, key];
        const line = at.lineOf(keyPath, { key: true });
        problems.push({ path: keyPath, line, reason: unknownKeyReason(key, allowed) });
      }
    } else if (issue.code === 'invalid_format' && typeof issue.input === 'string') {
      // The code rules of schemas.ts say what is allowed; add what was found.
      problems.push({ path, line: at.lineOf(path), reason: `${issue.message}, got ${describe(issue.input)}` });
    } else {
      problems.push({ path, line: at.lineOf(path), reason: issue.message });
    }
  }
  return problems;
}

/** Problems in file order; one cause reached by two rules is listed once. */
export function refuse(file: string, raw: RawProblem[]): never {
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
