import { JobsFileError, parseJobsFile, type ResolvedJobsFile } from '../../src/config/jobs-file.js';

/** The clock jobs.yaml unit tests parse against: a Monday noon, UTC. */
export const NOW = new Date('2026-06-15T12:00:00Z');
export const now = () => NOW;

export function parse(text: string): ResolvedJobsFile {
  return parseJobsFile(text, 'jobs.yaml', now);
}

/** The message lines of the JobsFileError that `text` must raise. */
export function problems(text: string): string[] {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof JobsFileError) return error.message.split('\n');
    throw error;
  }
  throw new Error('expected the file to be refused');
}

/** An earthquake stream named `quakes` with these lines (line 3 onwards). */
export const eq = (...lines: string[]) =>
  ['earthquakes:', '  - name: quakes', ...lines.map((l) => `    ${l}`)].join('\n') + '\n';
