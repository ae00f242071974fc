/**
 * Where the jobs file is by default. A module of its own: the CLI names it in every command's help,
 * which must not load the file's parser.
 */
export const DEFAULT_JOBS_FILE = './jobs.yaml';
