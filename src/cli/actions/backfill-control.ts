/**
 * `backfill list | pause | resume | cancel | budget`: an operator's hold on backfills already
 * enqueued. A target is a backfill id, or a stream (a jobs.yaml name, or a stream key) standing
 * for its most recent backfill(s).
 */
import { existsSync } from 'node:fs';
import { DEFAULT_JOBS_FILE, loadJobsFile } from '../../config/jobs-file.js';
import { backfillsOfStreams, loadBackfill, type BackfillRecord } from '../../db/backfills.js';
import type { Db } from '../../db/connection.js';
import { partitionsOfBackfill } from '../../db/partitions.js';
import { streamKeysNamed, type BackfillSummary } from '../../db/queries/backfills.js';
import { BACKFILL_CONTROL } from '../../domain/backfill.js';
import { isUsedUp } from '../../domain/budget.js';
import { currentYearEverywhere, toRfc3339 } from '../../domain/time.js';
import { UsageError } from '../../errors.js';
import {
  cancelBackfill,
  listBackfills,
  pauseBackfill,
  resumeBackfill,
  setBackfillBudget,
  type ControlResult,
} from '../../ingest/backfills.js';
import { EXIT } from '../exit.js';
import { loadEnv } from '../runtime.js';
import { awaitBackfill, openSession, type Session } from '../session.js';
import { parseMaxBilledCalls } from '../flags.js';
import { declaredStreams } from '../../service/declared-streams.js';

/** For each stream, the newest backfill that planned it; each backfill once, newest first. Pure. */
export function newestPerStream(
  streamKeys: string[],
  newestFirst: Array<Pick<BackfillRecord, 'id' | 'streamKeys'>>,
): string[] {
  const ids: string[] = [];
  for (const key of streamKeys) {
    const newest = newestFirst.find((b) => b.streamKeys.includes(key));
    if (newest && !ids.includes(newest.id)) ids.push(newest.id);
  }
  return newestFirst.filter((b) => ids.includes(b.id)).map((b) => b.id);
}

/** Stream keys a jobs.yaml name stands for, when a jobs file is at hand (an explicit --config must load). */
async function declaredKeys(name: string, config: string | undefined): Promise<string[]> {
  const path = config ?? (existsSync(DEFAULT_JOBS_FILE) ? DEFAULT_JOBS_FILE : null);
  if (path === null) return [];
  const file = await loadJobsFile(path).catch((e: unknown) => {
    if (config !== undefined) throw e;
    return null; // an invalid default file only fails to name streams; the database may still know them
  });
  if (file === null) return [];
  const declared = declaredStreams(file, currentYearEverywhere(Date.now()));
  return [...declared.entries()].filter(([, d]) => d.name.toLowerCase() === name.toLowerCase()).map(([key]) => key);
}

/** The backfills a target names: itself if it is an id, else the newest backfill of each of its streams. */
export async function resolveTargets(db: Db, target: string, config: string | undefined): Promise<string[]> {
  if (await loadBackfill(db, target)) return [target];
  const keys = [...new Set([...(await declaredKeys(target, config)), ...(await streamKeysNamed(db, target))])];
  if (keys.length === 0)
    throw new UsageError(
      `"${target}" is not a backfill id, a stream name or a stream key ` +
        '(`gateway-ingest backfill list` shows the ids)',
    );
  const ids = newestPerStream(keys, await backfillsOfStreams(db, keys));
  if (ids.length === 0)
    throw new UsageError(`stream "${target}" has no backfill (\`gateway-ingest backfill list\` shows them)`);
  return ids;
}

function capText(b: { maxBilledCalls: number | null }): string {
  return b.maxBilledCalls === null ? 'no cap on billed calls' : `max ${b.maxBilledCalls} billed calls`;
}

/** What a control command did, one line per backfill. Pure. */
export function formatControl(command: 'pause' | 'resume' | 'cancel', r: ControlResult): string {
  const id = r.backfill.id;
  if (command === 'pause') {
    return (
      `backfill ${id}: paused; ${r.removed} queued jobs taken off, ${r.running} running stop before their next call. ` +
      `Continue with: gateway-ingest backfill resume ${id}`
    );
  }
  if (command === 'resume')
    return `backfill ${id}: active (${capText(r.backfill)}); ${r.requeued} partitions queued again`;
  return (
    `backfill ${id}: cancelled; ${r.removed} queued jobs taken off, ${r.cancelled} partitions marked cancelled, ` +
    `${r.running} running finish their current call and stop. ` +
    'What was written stays; running the same backfill again fetches only what is missing'
  );
}

/** `paused by budget` is derived: active, at its cap, with work left. Pure. */
export function controlText(
  b: Pick<BackfillSummary, 'control' | 'budgetUsed' | 'maxBilledCalls' | 'partitions'>,
): string {
  if (b.control === BACKFILL_CONTROL.active && b.partitions.unfinished > 0 && isUsedUp(b.budgetUsed, b.maxBilledCalls))
    return 'paused by budget';
  if (b.control === BACKFILL_CONTROL.active && b.partitions.unfinished === 0)
    return b.partitions.failed > 0 ? 'finished with failures' : 'finished';
  return b.control;
}

/** `backfill list`: one block per backfill, newest first. Pure. */
export function formatBackfillList(rows: BackfillSummary[]): string {
  if (rows.length === 0) return 'no backfills yet\n';
  return rows
    .map((b) => {
      const p = b.partitions;
      const budget =
        b.maxBilledCalls === null ? `${b.budgetUsed} used, no cap` : `${b.budgetUsed} of ${b.maxBilledCalls} used`;
      const extra = `${p.partial > 0 ? `, ${p.partial} partial` : ''}${p.failed > 0 ? `, ${p.failed} failed` : ''}`;
      return [
        `${b.id}  ${controlText(b)}  created ${toRfc3339(b.createdAt.getTime())}`,
        `  ${b.description}`,
        `  partitions: ${p.done} of ${p.total} done${extra}; billed calls: ${b.billedCalls}; budget: ${budget}`,
      ].join('\n');
    })
    .join('\n\n')
    .concat('\n');
}

function summaryJson(b: BackfillSummary): Record<string, unknown> {
  return { ...b, status: controlText(b), createdAt: b.createdAt.toISOString() };
}

async function withSession(
  flags: { allowInsecureHttp?: boolean },
  needGateway: boolean,
  work: (s: Session) => Promise<void>,
): Promise<void> {
  const session = await openSession(loadEnv(process.env, flags), { needGateway });
  try {
    await work(session);
  } finally {
    await session.close();
  }
}

/** `backfill list`. */
export async function listAction(f: { json?: boolean; limit: string }): Promise<void> {
  const limit = Number(f.limit);
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new UsageError(`--limit: "${f.limit}" must be a whole number of at least 1`);
  await withSession({}, false, async (s) => {
    const rows = await listBackfills(s.db.db, limit);
    process.stdout.write(f.json ? `${JSON.stringify(rows.map(summaryJson), null, 2)}\n` : formatBackfillList(rows));
    process.exitCode = EXIT.ok;
  });
}

/** After resume or a raised budget, `--wait` / `--inline` wait for the backfill like `backfill --wait` does. */
async function waitIfAsked(s: Session, id: string, f: { wait?: boolean; inline?: boolean }): Promise<number> {
  if (!f.wait && !f.inline) return EXIT.ok;
  return awaitBackfill(s, await partitionsOfBackfill(s.db.db, id), Boolean(f.inline), { backfillId: id });
}

/** `backfill pause` and `backfill cancel`. */
export async function controlAction(
  command: 'pause' | 'cancel',
  target: string,
  f: { config?: string },
): Promise<void> {
  await withSession({}, false, async (s) => {
    for (const id of await resolveTargets(s.db.db, target, f.config)) {
      const r =
        command === 'pause' ? await pauseBackfill(s.db.db, s.queues, id) : await cancelBackfill(s.db.db, s.queues, id);
      process.stdout.write(`${formatControl(command, r)}\n`);
    }
    process.exitCode = EXIT.ok;
  });
}

export interface ResumeFlags {
  config?: string;
  maxBilledCalls?: string;
  wait?: boolean;
  inline?: boolean;
  allowInsecureHttp?: boolean;
}

/** `backfill resume`. */
export async function resumeAction(target: string, f: ResumeFlags): Promise<void> {
  const cap = parseMaxBilledCalls('--max-billed-calls', f.maxBilledCalls);
  await withSession(f, Boolean(f.inline), async (s) => {
    const ids = await resolveTargets(s.db.db, target, f.config);
    for (const id of ids)
      process.stdout.write(
        `${formatControl('resume', await resumeBackfill(s.db.db, s.queues, id, cap ?? undefined))}\n`,
      );
    let code: number = EXIT.ok;
    for (const id of ids) code = Math.max(code, await waitIfAsked(s, id, f));
    process.exitCode = code;
  });
}

/** `none` lifts the cap; otherwise a positive whole number. */
export function parseBudgetArgument(value: string): number | null {
  return value.toLowerCase() === 'none' ? null : parseMaxBilledCalls('N', value);
}

/** `backfill budget`. */
export async function budgetAction(target: string, n: string, f: ResumeFlags): Promise<void> {
  const cap = parseBudgetArgument(n);
  await withSession(f, Boolean(f.inline), async (s) => {
    const ids = await resolveTargets(s.db.db, target, f.config);
    for (const id of ids) {
      const b = await setBackfillBudget(s.db.db, s.queues, id, cap);
      process.stdout.write(`backfill ${id}: ${capText(b)} (${b.control})\n`);
    }
    let code: number = EXIT.ok;
    for (const id of ids) code = Math.max(code, await waitIfAsked(s, id, f));
    process.exitCode = code;
  });
}
