/**
 * A tick is one scheduled run of one jobs.yaml stream (one refresh tier of an earthquake stream).
 * It only plans and enqueues: the window and chunk jobs it adds are fetched by the ordinary
 * workers, with their retries, truncation handling and deletion reconciliation.
 */
import { UnrecoverableError, Worker, type ConnectionOptions, type Job, type Queue } from 'bullmq';
import * as z from 'zod';
import type { EarthquakeStreamConfig, IndicatorStreamConfig, ResolvedJobsFile } from '../config/jobs-file.js';
import type { Db } from '../db/connection.js';
import { enqueueEarthquakeRefresh, enqueueIndicatorRefresh, type RefreshSummary } from '../ingest/enqueue-refresh.js';
import type { Log } from '../log.js';
import { resolveYearRange } from '../planning/chunks.js';
import { planLookbackWindows } from '../planning/windows.js';
import { TICK_QUEUE, type TickData } from './schedulers.js';
import { currentYearEverywhere } from '../domain/time.js';

export const tickSchema = z.strictObject({
  kind: z.enum(['earthquake', 'indicator']),
  stream: z.string().min(1),
  tier: z.number().int().min(0).optional(),
}) satisfies z.ZodType<TickData>;

export interface TickDeps {
  db: Db;
  queues: { earthquake: Queue; indicator: Queue };
  /** The jobs file as last loaded: a reload applies to the next tick without a restart. */
  jobsFile: () => ResolvedJobsFile;
  log: Log;
}

export interface TickOutcome {
  kind: TickData['kind'];
  stream: string;
  tier: number;
  planned: number;
  added: number;
  /** Slots an earlier tick is still reading (left to finish). */
  stillRunning: number;
  /** Why nothing was enqueued, when nothing was. */
  skipped: string | null;
}

/** One tier: its band of event ages, [now - withinMs, now - fromMs], in slots reused by every tick. */
async function earthquakeRun(
  s: EarthquakeStreamConfig,
  tierIndex: number,
  nowMs: number,
  deps: TickDeps,
): Promise<RefreshSummary[] | string> {
  const tier = s.refresh[tierIndex];
  if (!tier) return `refresh tier ${tierIndex} is no longer declared for ${s.name}`;
  const windows = planLookbackWindows({ nowMs, lookbackMs: tier.withinMs, recentMs: tier.fromMs });
  const filters = { minMagnitude: s.minMagnitude, circle: s.circle };
  return [
    await enqueueEarthquakeRefresh(deps.db, deps.queues.earthquake, {
      filters,
      streamName: s.name,
      tier: tierIndex,
      windows,
    }),
  ];
}

function indicatorRun(s: IndicatorStreamConfig, nowMs: number, deps: TickDeps): Promise<RefreshSummary[]> {
  const currentYear = currentYearEverywhere(nowMs);
  const years = resolveYearRange({ fromYear: s.fromYear ?? undefined, toYear: s.toYear ?? undefined, currentYear });
  return enqueueIndicatorRefresh(deps.db, deps.queues.indicator, {
    indicators: s.indicators,
    countries: s.countries,
    ...years,
    streamName: s.name,
  });
}

function skipReason(s: { enabled: boolean } | undefined, data: TickData, file: ResolvedJobsFile): string {
  return s ? `disabled in ${file.path}` : `not declared as an ${data.kind} stream in ${file.path}`;
}

/** The summaries of what was enqueued, or why nothing was. */
async function plan(data: TickData, nowMs: number, deps: TickDeps): Promise<RefreshSummary[] | string> {
  const file = deps.jobsFile();
  if (data.kind === 'earthquake') {
    const s = file.earthquakes.find((e) => e.name === data.stream);
    return s?.enabled ? earthquakeRun(s, data.tier ?? 0, nowMs, deps) : skipReason(s, data, file);
  }
  const s = file.indicators.find((i) => i.name === data.stream);
  return s?.enabled ? indicatorRun(s, nowMs, deps) : skipReason(s, data, file);
}

/** Runs one tick; a stream no longer declared (or disabled) is skipped, not failed. */
export async function processTick(data: TickData, nowMs: number, deps: TickDeps): Promise<TickOutcome> {
  const base = { kind: data.kind, stream: data.stream, tier: data.tier ?? 0, planned: 0, added: 0, stillRunning: 0 };
  const summaries = await plan(data, nowMs, deps);
  if (typeof summaries === 'string') return { ...base, skipped: summaries };
  const sum = (f: (s: RefreshSummary) => number) => summaries.reduce((n, s) => n + f(s), 0);
  return {
    ...base,
    planned: sum((s) => s.planned),
    added: sum((s) => s.added),
    stillRunning: sum((s) => s.stillRunning),
    skipped: null,
  };
}

/**
 * The time the tick was due, read from the id BullMQ gives scheduler jobs
 * (`repeat:<scheduler>:<millis>`), so a retried tick plans the same windows (same job ids) instead
 * of new ones. Never later than now: the gateway refuses windows reaching into the future.
 */
export function tickTimeMs(jobId: string | undefined, nowMs: number): number {
  const match = /^repeat:.+:(\d+)$/.exec(jobId ?? '');
  const due = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(due) && due > 0 ? Math.min(due, nowMs) : nowMs;
}

export function startTickWorker(settings: { connection: ConnectionOptions; prefix: string }, deps: TickDeps): Worker {
  const worker = new Worker(
    TICK_QUEUE,
    async (job: Job) => {
      const parsed = tickSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid tick payload: ${parsed.error.message}`);
      const outcome = await processTick(parsed.data, tickTimeMs(job.id, Date.now()), deps);
      deps.log.info(
        { jobId: job.id, ...outcome },
        outcome.skipped ? 'scheduled run skipped' : 'scheduled run enqueued',
      );
      return outcome;
    },
    { connection: settings.connection, prefix: settings.prefix, concurrency: 1 },
  );
  worker.on('error', (err) => deps.log.error({ err, queue: TICK_QUEUE }, 'worker error'));
  worker.on('failed', (job, err) =>
    deps.log.warn({ jobId: job?.id, queue: TICK_QUEUE, err: err.message }, 'scheduled run failed'),
  );
  return worker;
}
