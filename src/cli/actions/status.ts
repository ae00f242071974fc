import { existsSync } from 'node:fs';
import { proveDoneWithoutProof } from '../../db/coverage.js';
import { DEFAULT_JOBS_FILE, JobsFileError, loadJobsFile, type ResolvedJobsFile } from '../../config/jobs-file.js';
import { streamFreshness } from '../../db/queries/freshness.js';
import { streamStatus, unfinishedByBackfill } from '../../db/queries/status.js';
import { budgetUsed } from '../../db/budget.js';
import type { Db } from '../../db/connection.js';
import { DAY_SCOPE, nextUtcMidnightMs, utcDayOf } from '../../domain/budget.js';
import { CANCELLED_ERROR_KIND } from '../../domain/partition.js';
import { formatDayBudget, formatHold, holdsByStream, type DayBudget, type StreamHold } from '../status-holds.js';
import { toRfc3339 } from '../../domain/time.js';
import { EXIT } from '../exit.js';
import { connectDb, loadEnv } from '../runtime.js';
import { buildStatusReport, type Coverage, type StreamReport } from '../status-report.js';

const MAX_LISTED = 5;

function percent(fraction: number): string {
  return `${(Math.floor(fraction * 10_000) / 100).toFixed(2)}%`;
}

function formatGap(g: { from: string | number; to: string | number }, c: Coverage): string {
  // The gap up to this instant is the time since the last run: say so rather than print a timestamp.
  if (c.unit === 'time' && c.untilNow && g.to === c.to) return `${g.from} .. now`;
  return g.from === g.to ? String(g.from) : `${g.from} .. ${g.to}`;
}

function formatCoverage(c: Coverage | null): string[] {
  if (c === null) return ['  coverage: nothing ingested yet'];
  const until = c.unit === 'time' && c.untilNow ? 'now' : String(c.to);
  const count = c.gaps.length === 0 ? 'no gaps' : `${c.gaps.length} gap${c.gaps.length === 1 ? '' : 's'}`;
  const lines = [`  coverage ${c.from} .. ${until}: ${percent(c.coveredFraction)}, ${count}`];
  const gaps: Array<{ from: string | number; to: string | number }> = c.gaps;
  for (const g of gaps.slice(0, MAX_LISTED)) lines.push(`    gap ${formatGap(g, c)}`);
  if (gaps.length > MAX_LISTED) lines.push(`    ... ${gaps.length - MAX_LISTED} more (--json lists all)`);
  return lines;
}

function formatFreshness(s: StreamReport): string {
  if ('newestEventTime' in s.freshness)
    return `  freshness: newest event ${s.freshness.newestEventTime?.toISOString() ?? 'none yet'}`;
  return `  freshness: last year with a value ${s.freshness.lastValueYear ?? 'none yet'}`;
}

/** The most recently proven parts first: what an operator asks is "how fresh is the recent range". */
function formatProven(s: StreamReport): string[] {
  if (s.provenComplete.length === 0) return [];
  const recent = [...s.provenComplete].sort((a, b) => (a.provenAt < b.provenAt ? 1 : -1));
  const lines = recent.slice(0, MAX_LISTED).map((p) => `    ${p.from} .. ${p.to} at ${p.provenAt}`);
  if (recent.length > MAX_LISTED) lines.push(`    ... ${recent.length - MAX_LISTED} more parts (--json lists all)`);
  return ['  last proven complete:', ...lines];
}

function formatChanges(s: StreamReport): string[] {
  const c = s.catalogChanges;
  return c
    ? [`  catalog changes: ${c.deletedEvents} events marked deleted, ${c.revisedLastDay} revised in the last day`]
    : [];
}

/** A stream's report, with what holds its unfinished work (additive to the JSON). */
export type HeldStreamReport = StreamReport & { holds?: StreamHold[] };

function formatStream(s: HeldStreamReport): string {
  const p = s.partitions;
  const schedule = s.schedule === null ? 'not in the jobs file' : `${s.schedule}${s.enabled ? '' : ' (disabled)'}`;
  const lines = [
    `${s.name ? `${s.name} (${s.streamKey})` : s.streamKey}`,
    `  schedule: ${schedule}`,
    `  last success: ${s.lastSuccessAt?.toISOString() ?? 'never'}`,
    formatFreshness(s),
    ...formatCoverage(s.coverage),
    ...formatProven(s),
    ...formatChanges(s),
    `  partitions: ${p.done} done, ${p.pending} pending, ${p.running} running, ` +
      `${p.partial > 0 ? `${p.partial} partial, ` : ''}${p.failed} failed`,
    ...(s.holds ?? []).map(formatHold),
    `  rows written: ${s.rowsWritten}; calls: ${s.calls}, billed ${s.billedCalls} (${s.units} units)` +
      (s.billedUnknown > 0 ? `, billed unknown ${s.billedUnknown} (answer never recorded)` : '') +
      `, today ${s.billedCallsToday} (${s.unitsToday} units)`,
  ];
  if (s.lastError) lines.push(`  last error: [${s.lastErrorKind}] ${s.lastError}`);
  for (const f of s.failedPartitions.slice(0, MAX_LISTED))
    lines.push(`  failed ${f.partitionKey}: [${f.kind}] ${f.error}`);
  if (s.failedPartitions.length > MAX_LISTED)
    lines.push(`  ... ${s.failedPartitions.length - MAX_LISTED} more failed (--json lists all)`);
  for (const x of s.partialPartitions.slice(0, MAX_LISTED)) {
    const where = x.unresolved.map((r) => `${toRfc3339(r.lo)}..${toRfc3339(r.hi)}`).join(', ');
    lines.push(
      `  partial ${x.partitionKey}: unresolved ${where} ` +
        '(more events than one answer holds; a re-run retries only these)',
    );
  }
  return lines.join('\n');
}

/** Which jobs file joined its schedules and ranges into the report: a checkout's sample one is not the user's. */
export function jobsFileLine(file: ResolvedJobsFile | null, explicit: boolean): string {
  if (file === null)
    return explicit ? 'jobs file: none' : `jobs file: none (no ${DEFAULT_JOBS_FILE} here; --config names one)`;
  const streams = file.earthquakes.length + file.indicators.length;
  const how = explicit ? '--config' : `found in the current directory; --config names another`;
  return `jobs file: ${file.path} (${streams} streams declared, ${how})`;
}

export function formatStatus(rows: HeldStreamReport[], day?: DayBudget, jobs?: string): string {
  const head = `${jobs ? `${jobs}\n` : ''}${day ? `${formatDayBudget(day)}\n\n` : ''}`;
  if (rows.length === 0)
    return `${head}no streams yet: run \`gateway-ingest backfill ...\` or \`gateway-ingest start\`\n`;
  return `${head}${rows.map(formatStream).join('\n\n')}\n`;
}

/** Today's counter against BILLED_CALLS_PER_DAY, and per stream what holds its unfinished partitions. */
async function holdsNow(
  db: Db,
  cap: number | null,
  nowMs: number,
): Promise<{ day: DayBudget; holds: Map<string, StreamHold[]> }> {
  const today = utcDayOf(nowMs);
  const day = {
    day: today,
    used: await budgetUsed(db, { scope: DAY_SCOPE, day: today }),
    cap,
    untilMs: nextUtcMidnightMs(nowMs),
  };
  return { day, holds: holdsByStream(await unfinishedByBackfill(db), day) };
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

/**
 * Failed windows need a person (or a re-run): exit 1 so a cron wrapper alerts, with or without --json.
 * Windows of a cancelled backfill were a person's choice: they show as failed, but alert nobody.
 */
export function statusExitCode(report: StreamReport[]): number {
  return report.some((s) => s.failedPartitions.some((f) => f.kind !== CANCELLED_ERROR_KIND)) ? EXIT.failed : EXIT.ok;
}

/** `status`: per stream, what was ingested, proven, paid and what failed; exits 1 when a window failed. */
export async function runStatus(f: { json?: boolean; config?: string }): Promise<void> {
  const file = await jobsFileFor(f.config);
  const env = loadEnv();
  const db = await connectDb(env);
  try {
    // Windows an older version finished (no proof written) count as covered, whether or not a
    // worker's reconciliation has proven them yet.
    await proveDoneWithoutProof(db.db);
    const [rows, freshness] = await Promise.all([streamStatus(db.db), streamFreshness(db.db)]);
    const nowMs = Date.now();
    const { day, holds } = await holdsNow(db.db, env.billedCallsPerDay, nowMs);
    const report: HeldStreamReport[] = buildStatusReport(rows, freshness, file, nowMs).map((r) => ({
      ...r,
      holds: holds.get(r.streamKey) ?? [],
    }));
    const jobs = jobsFileLine(file, f.config !== undefined);
    // The JSON stays the array it always was: which file was read goes to stderr.
    if (f.json) process.stderr.write(`${jobs}\n`);
    process.stdout.write(f.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report, day, jobs));
    process.exitCode = statusExitCode(report);
  } finally {
    await db.close();
  }
}
