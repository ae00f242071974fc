/**
 * Follows edits of jobs.yaml while the service runs. Polling (fs.watchFile) rather than fs.watch:
 * it also sees files replaced through symlinks and bind mounts (Kubernetes ConfigMaps, Docker).
 */
import { unwatchFile, watchFile } from 'node:fs';
import { JobsFileError, loadJobsFile, type ResolvedJobsFile } from '../config/jobs-file.js';
import type { Log } from '../log.js';

export interface JobsFileWatch {
  current: () => ResolvedJobsFile;
  /** Re-reads the file; true when it changed and is valid. An invalid file keeps the previous one. */
  reload(): Promise<boolean>;
  close(): void;
}

export interface WatchOptions {
  /** 0 disables polling; `reload()` (SIGHUP) still works. */
  intervalMs: number;
  log: Log;
  onChange(file: ResolvedJobsFile): void;
}

export function watchJobsFile(initial: ResolvedJobsFile, o: WatchOptions): JobsFileWatch {
  let file = initial;
  const path = initial.path;
  const reload = async (): Promise<boolean> => {
    let next: ResolvedJobsFile;
    try {
      next = await loadJobsFile(path);
    } catch (e) {
      // Removing every scheduler because of a typo would stop ingestion: keep running as before.
      const problems = e instanceof JobsFileError ? e.problems : [String(e)];
      o.log.error({ path, problems }, 'jobs file invalid: keeping the streams loaded before');
      return false;
    }
    if (JSON.stringify(next) === JSON.stringify(file)) return false;
    file = next;
    o.log.info({ path }, 'jobs file changed');
    o.onChange(file);
    return true;
  };
  const listener = () => void reload();
  if (o.intervalMs > 0) watchFile(path, { interval: o.intervalMs, persistent: false }, listener);
  return {
    current: () => file,
    reload,
    close: () => unwatchFile(path, listener),
  };
}
