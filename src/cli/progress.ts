/**
 * Progress of `--wait` / `--inline` for people: partitions finished of all, rows written, billed
 * calls and their rate, ETA. On a TTY a bar stays at the bottom with notes printed above it (and
 * the inline workers' logs go to a file the bar names, so nothing tears it); otherwise one plain
 * line every few seconds, changed or not, so a CI log shows the run is alive.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import cliProgress from 'cli-progress';
import { pino } from 'pino';
import type { ResolvedEnv } from '../config/env.js';
import { groupDigits } from '../domain/text.js';
import type { WaitProgress } from '../ingest/wait.js';
import { createLog, type Log } from '../log.js';

export interface ProgressReporter {
  update(p: WaitProgress): void;
  /** A line for the user (an outage, a missing worker) that must not tear the bar. */
  note(line: string): void;
  stop(): void;
}

/** How often a line is printed without a TTY. */
export const PLAIN_INTERVAL_MS = 5_000;
/** A spend rate over less time than this says little. */
const MIN_RATE_MS = 10_000;

const finished = (p: WaitProgress) => p.done + p.partial + p.failed;

export interface ProgressFigures {
  finished: number;
  total: number;
  failed: number;
  partial: number;
  /** Since the wait began (the counters of partitions include earlier runs). */
  rowsWritten: number;
  billedCalls: number;
  billedPerMinute: number | null;
  /** null until a partition finished since the wait began. */
  etaMs: number | null;
  elapsedMs: number;
}

/** Pure: what a progress line shows, from the counts when the wait began and now. */
export function progressFigures(first: WaitProgress, latest: WaitProgress, elapsedMs: number): ProgressFigures {
  const billedCalls = Math.max(0, latest.billedCalls - first.billedCalls);
  const doneSince = finished(latest) - finished(first);
  const remaining = Math.max(0, latest.total - finished(latest));
  return {
    finished: finished(latest),
    total: latest.total,
    failed: latest.failed,
    partial: latest.partial,
    rowsWritten: Math.max(0, latest.rowsWritten - first.rowsWritten),
    billedCalls,
    billedPerMinute: elapsedMs >= MIN_RATE_MS ? (billedCalls * 60_000) / elapsedMs : null,
    etaMs: remaining === 0 ? 0 : doneSince > 0 ? (remaining * elapsedMs) / doneSince : null,
    elapsedMs,
  };
}

/** `1h 02m`, `4m 05s`, `12s`. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const pad = (x: number) => String(x).padStart(2, '0');
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${s}s`;
}

const n = groupDigits;

/** Bar payload; `eta` is taken by cli-progress for its own estimate, so ours is `remaining`. */
function parts(f: ProgressFigures): { counts: string; spend: string; remaining: string } {
  const held = [f.failed > 0 ? `${f.failed} failed` : '', f.partial > 0 ? `${f.partial} partial` : '']
    .filter(Boolean)
    .join(', ');
  return {
    counts: `${n(f.finished)}/${n(f.total)} partitions${held ? ` (${held})` : ''}`,
    spend:
      `${n(f.rowsWritten)} rows | ${n(f.billedCalls)} billed calls` +
      (f.billedPerMinute === null ? '' : ` (${f.billedPerMinute.toFixed(1)}/min)`),
    remaining: f.etaMs === null ? 'ETA --' : `ETA ${formatDuration(f.etaMs)}`,
  };
}

/** Pure: the line printed without a TTY. */
export function progressLine(label: string, f: ProgressFigures): string {
  const p = parts(f);
  return `${label}: ${p.counts} | ${p.spend} | ${p.remaining} | ${formatDuration(f.elapsedMs)} elapsed`;
}

export interface ReporterOptions {
  intervalMs?: number;
  now?: () => number;
}

export function progressReporter(out: NodeJS.WriteStream, label: string, o: ReporterOptions = {}): ProgressReporter {
  const now = o.now ?? Date.now;
  const startedAt = now();
  let first: WaitProgress | null = null;
  let latest: WaitProgress | null = null;
  const figures = () => progressFigures(first!, latest!, now() - startedAt);
  const record = (p: WaitProgress) => {
    first ??= p;
    latest = p;
  };
  if (out.isTTY) {
    const bars = new cliProgress.MultiBar(
      {
        format: `${label} [{bar}] {counts} | {spend} | {remaining} | {duration_formatted}`,
        stream: out,
        // A short bar leaves the figures room on an 80-column terminal.
        barsize: 20,
        clearOnComplete: false,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let bar: cliProgress.SingleBar | null = null;
    return {
      update(p) {
        record(p);
        const f = figures();
        bar ??= bars.create(p.total, 0, parts(f));
        bar.setTotal(p.total);
        bar.update(f.finished, parts(f));
      },
      note(line) {
        // Before the bar exists there is nothing to tear; after, the bar is redrawn below the line at once.
        if (bar === null) return void out.write(`${line}\n`);
        bars.log(`${line}\n`);
        bars.update();
      },
      stop: () => bars.stop(),
    };
  }
  // A line now and then whatever changed: a silent minute in a CI log looks like a hang.
  const print = () => {
    if (latest !== null) out.write(`${progressLine(label, figures())}\n`);
  };
  let timer: NodeJS.Timeout | null = null;
  return {
    update(p) {
      const firstUpdate = latest === null;
      record(p);
      if (firstUpdate) {
        print();
        timer = setInterval(print, o.intervalMs ?? PLAIN_INTERVAL_MS);
        timer.unref();
      }
    },
    note: (line) => out.write(`${line}\n`),
    stop() {
      if (timer !== null) clearInterval(timer);
      print();
    },
  };
}

export interface WorkerLogFile {
  log: Log;
  path: string;
  close(): void;
}

/**
 * On a TTY, the logs of workers running inline would tear the bar: they go to a file instead,
 * which the bar names. Elsewhere (a pipe, CI) they stay JSON lines on stderr; null then.
 */
export function inlineWorkerLogFile(
  out: NodeJS.WriteStream,
  env: Pick<ResolvedEnv, 'logLevel'>,
  dir = tmpdir(),
): WorkerLogFile | null {
  if (!out.isTTY) return null;
  const path = join(dir, `gateway-ingest-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}.log`);
  // Synchronous: the file exists once its path is printed, and no line is lost at exit (a line per call is cheap).
  const destination = pino.destination({ dest: path, sync: true, mkdir: true });
  return { log: createLog(env.logLevel, destination), path, close: () => destination.end() };
}
