import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import { DEFAULT_JOBS_FILE, JobsFileError, loadJobsFile, type ResolvedJobsFile } from '../../config/jobs-file.js';
import { streamFreshness } from '../../db/queries/freshness.js';
import { streamStatus } from '../../db/queries/status.js';
import { EXIT } from '../exit.js';
import { connectDb, loadEnv } from '../runtime.js';
import { buildStatusReport, type Coverage, type StreamReport } from '../status-report.js';

const MAX_LISTED = 5;

function percent(fraction: number): string {
  return `${(Math.floor(fraction * 10_000) / 100).toFixed(2)}%`;
}

function formatGap(g: { from: string | number; to: string | number }, c: Coverage): string {
  // The gap up to this instant is the time since the last run: say so rather than print a timestamp.
  if (c.unit === 'time' && g.to === c.to) return `${g.from} .. now`;
  return g.from === g.to ? String(g.from) : `${g.from} .. ${g.to}`;
}

function formatCoverage(c: Coverage | null): string[] {
  if (c === null) return ['  coverage: nothing ingested yet'];
  const until = c.unit === 'time' ? 'now' : String(c.to);
  const count = c.gaps.length === 0 ? 'no gaps' : `${c.gaps.length} gap${c.gaps.length === 1 ? '' : 's'}`;
  const lines = [`  coverage ${c.from} .. ${until}: ${percent(c.coveredFraction)}, ${count}`];
  const gaps: Array<{ from: string | number; to: string | number }> = c.gaps;
  for (const g of gaps.slice(0, MAX_LISTED)) lines.push(`    gap ${formatGap(g, c)}`);
  if (gaps.length > MAX_LISTED) lines.push(`    ... ${gaps.length - MAX_LISTED} more (--json lists all)`);
  return lines;
}

function formatFreshness(s: StreamReport): string {
  if ('newestEventTime' in s.freshness) return `  freshness: newest event ${s.freshness.newestEventTime?.toISOString() ?? 'none yet'}`;
  return `  freshness: last year with a value ${s.freshness.lastValueYear ?? 'none yet'}`;
}

function formatStream(s: StreamReport): string {
  const p = s.partitions;
  const schedule = s.schedule === null ? 'not in the jobs file' : `${s.schedule}${s.enabled ? '' : ' (disabled)'}`;
  const lines = [
    `${s.name ? `${s.name} (${s.streamKey})` : s.streamKey}`,
    `  schedule: ${schedule}`,
    `  last success: ${s.lastSuccessAt?.toISOString() ?? 'never'}`,
    formatFreshness(s),
    ...formatCoverage(s.coverage),
    `  partitions: ${p.done} done, ${p.pending} pending, ${p.running} running, ${p.failed} failed`,
    `  rows written: ${s.rowsWritten}; calls: ${s.calls}, billed ${s.billedCalls} (${s.units} units), today ${s.billedCallsToday} (${s.unitsToday} units)`,
  ];
  if (s.lastError) lines.push(`  last error: [${s.lastErrorKind}] ${s.lastError}`);
  for (const f of s.failedPartitions.slice(0, MAX_LISTED)) lines.push(`  failed ${f.partitionKey}: [${f.kind}] ${f.error}`);
  if (s.failedPartitions.length > MAX_LISTED) lines.push(`  ... ${s.failedPartitions.length - MAX_LISTED} more failed (--json lists all)`);
  return lines.join('\n');
}

export function formatStatus(rows: StreamReport[]): string {
  if (rows.length === 0) return 'no streams yet: run `gateway-ingest backfill ...` or `gateway-ingest start`\n';
  return `${rows.map(formatStream).join('\n\n')}\n`;
}

/** An explicit --config must load; the default ./jobs.yaml is optional and only warned about. */
async function jobsFileFor(config: string | undefined): Promise<ResolvedJobsFile | null> {
  if (config !== undefined) return loadJobsFile(config);
  if (!existsSync(DEFAULT_JOBS_FILE)) return null;
  try {
    return await loadJobsFile(DEFAULT_JOBS_FILE);
  } catch (e) {
    if (!(e instanceof JobsFileError)) throw e;
    process.stderr.write(`warning: ignoring ${DEFAULT_JOBS_FILE} (invalid, see check-config):\n${e.message}\n`);
    return null;
  }
}

export function statusCommand(): Command {
  return new Command('status')
    .description('per stream: schedule, last success, freshness, coverage and gaps, billed calls and units, failed windows')
    .option('--json', 'machine-readable output')
    .addOption(new Option('--config <path>', `jobs file to join schedules and backfill ranges from (default: ${DEFAULT_JOBS_FILE} when present)`))
    .action(async (f: { json?: boolean; config?: string }) => {
      const file = await jobsFileFor(f.config);
      const env = loadEnv();
      const db = await connectDb(env);
      try {
        const [rows, freshness] = await Promise.all([streamStatus(db.db), streamFreshness(db.db)]);
        const report = buildStatusReport(rows, freshness, file, Date.now());
        process.stdout.write(f.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
        process.exitCode = EXIT.ok;
      } finally {
        await db.close();
      }
    });
}
