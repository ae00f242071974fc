/**
 * Reads everything the status page shows, in parallel, and renders it.
 */
import type { ResolvedJobsFile } from '../../config/jobs-file.js';
import type { Db } from '../../db/connection.js';
import { streamFreshness } from '../../db/queries/freshness.js';
import { streamStatus } from '../../db/queries/status.js';
import { buildPageModel, firstChartDay, type PageModel } from './model.js';
import { renderStatusPage } from './page.js';
import { backfillsWithBudgets, billedPerDay, dayBudgetUsed, partitionRanges, streamErrors, utcDay } from './queries.js';

export interface StatusSources {
  db: Db;
  /** The jobs file as last loaded, for schedules and declared ranges. */
  jobsFile: () => ResolvedJobsFile | null;
  budget: { billedCallsPerDay: number | null };
}

export async function loadPageModel(s: StatusSources, nowMs: number): Promise<PageModel> {
  const [status, freshness, errors, ranges, daily, backfills, used] = await Promise.all([
    streamStatus(s.db),
    streamFreshness(s.db),
    streamErrors(s.db),
    partitionRanges(s.db),
    billedPerDay(s.db, firstChartDay(nowMs)),
    backfillsWithBudgets(s.db),
    dayBudgetUsed(s.db, utcDay(nowMs)),
  ]);
  return buildPageModel({
    nowMs,
    status,
    freshness,
    errors,
    ranges,
    file: s.jobsFile(),
    daily,
    backfills,
    dayBudgetUsed: used,
    billedCallsPerDay: s.budget.billedCallsPerDay,
  });
}

export async function statusPageHtml(s: StatusSources, nowMs = Date.now()): Promise<string> {
  return renderStatusPage(await loadPageModel(s, nowMs));
}
