import cliProgress from 'cli-progress';
import type { WaitProgress } from '../ingest/wait.js';

/** A bar on a TTY; otherwise a line whenever the counts change, for logs and CI. */
export function progressReporter(out: NodeJS.WriteStream, label: string): { update(p: WaitProgress): void; stop(): void } {
  if (out.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {value}/{total} partitions | failed {failed} | {duration_formatted}`, stream: out },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(p) {
        if (!started) bar.start(p.total, 0, { failed: 0 });
        started = true;
        bar.setTotal(p.total);
        bar.update(p.done + p.failed, { failed: p.failed });
      },
      stop: () => started && bar.stop(),
    };
  }
  let last = '';
  return {
    update(p) {
      const line = `${label}: ${p.done + p.failed}/${p.total} partitions finished (${p.done} done, ${p.failed} failed)`;
      if (line !== last) out.write(`${line}\n`);
      last = line;
    },
    stop: () => undefined,
  };
}
