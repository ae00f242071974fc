/**
 * BullMQ job schedulers mirroring the enabled streams of jobs.yaml. Each scheduler puts one "tick"
 * job per due time on the `schedule-ticks` queue; the tick processor turns it into window jobs.
 */
import { Queue, type ConnectionOptions, type JobSchedulerJson, type JobsOptions } from 'bullmq';
import type { ResolvedJobsFile, Schedule } from '../config/jobs-file.js';

export const TICK_QUEUE = 'schedule-ticks';
export const TICK_JOB_NAME = 'tick';

export type StreamKind = 'earthquake' | 'indicator';

export interface TickData {
  kind: StreamKind;
  stream: string;
  /** Earthquake streams: which refresh tier this scheduler re-reads (0 when absent). */
  tier?: number;
}

export type SchedulerRepeat = { pattern: string; tz: string } | { every: number };

export interface DesiredScheduler {
  id: string;
  repeat: SchedulerRepeat;
  data: TickData;
}

/** Ticks are cheap and idempotent (deterministic window job ids), so a few retries suffice. */
export const TICK_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { count: 1_000 },
  removeOnFail: { count: 1_000 },
};

/** Tier 0 keeps the plain id, so a stream that gains tiers keeps its first scheduler. */
export function schedulerId(kind: StreamKind, stream: string, tier = 0): string {
  return tier === 0 ? `${kind}:${stream}` : `${kind}:${stream}:tier${tier}`;
}

/** jobs.yaml evaluates cron in UTC unless told otherwise; BullMQ would use the host's zone. */
function repeatOf(schedule: Schedule): SchedulerRepeat {
  if (schedule.kind === 'every') return { every: schedule.everyMs };
  return { pattern: schedule.pattern, tz: schedule.timezone ?? 'UTC' };
}

/**
 * Pure: one scheduler per enabled indicator stream and per refresh tier of an enabled earthquake
 * stream, in file order.
 */
export function desiredSchedulers(file: ResolvedJobsFile): DesiredScheduler[] {
  const quakes = file.earthquakes
    .filter((s) => s.enabled)
    .flatMap((s) =>
      s.refresh.map((tier, i) => ({
        id: schedulerId('earthquake', s.name, i),
        repeat: repeatOf(tier.schedule),
        data: { kind: 'earthquake' as const, stream: s.name, tier: i },
      })),
    );
  const indicators = file.indicators
    .filter((s) => s.enabled)
    .map((s) => ({
      id: schedulerId('indicator', s.name),
      repeat: repeatOf(s.schedule),
      data: { kind: 'indicator' as const, stream: s.name },
    }));
  return [...quakes, ...indicators];
}

export function openTickQueue(connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(TICK_QUEUE, { connection, prefix, defaultJobOptions: TICK_JOB_OPTIONS });
}

/** True when Redis already holds exactly this scheduler, so upserting it would change nothing. */
export function sameScheduler(existing: JobSchedulerJson, desired: DesiredScheduler): boolean {
  const r = desired.repeat;
  const timing =
    'every' in r
      ? existing.every === r.every && !existing.pattern
      : existing.pattern === r.pattern && (existing.tz ?? 'UTC') === r.tz && !existing.every;
  return (
    timing &&
    existing.name === TICK_JOB_NAME &&
    JSON.stringify(existing.template?.data) === JSON.stringify(desired.data)
  );
}

export interface SyncResult {
  upserted: string[];
  unchanged: string[];
  removed: string[];
}

async function listSchedulers(queue: Queue): Promise<JobSchedulerJson[]> {
  const out: JobSchedulerJson[] = [];
  const page = 500;
  for (let start = 0; ; start += page) {
    const batch = await queue.getJobSchedulers(start, start + page - 1, true);
    out.push(...batch);
    if (batch.length < page) return out;
  }
}

/** BullMQ drops only a delayed next tick; one already waiting would still run the removed stream. */
async function removeScheduler(queue: Queue, s: JobSchedulerJson): Promise<void> {
  await queue.removeJobScheduler(s.key);
  if (s.next === undefined) return;
  const next = await queue.getJob(`repeat:${s.key}:${s.next}`);
  if (next && (await next.getState()) === 'waiting') await next.remove().catch(() => undefined);
}

/**
 * Converges Redis to `desired`. Every step is keyed by scheduler id and atomic in Redis, so
 * replicas syncing the same file at once end with one scheduler per stream and one pending tick.
 */
export async function syncSchedulers(queue: Queue, desired: readonly DesiredScheduler[]): Promise<SyncResult> {
  const existing = new Map((await listSchedulers(queue)).map((s) => [s.key, s]));
  const result: SyncResult = { upserted: [], unchanged: [], removed: [] };
  for (const d of desired) {
    const current = existing.get(d.id);
    if (current && sameScheduler(current, d)) {
      result.unchanged.push(d.id);
      continue;
    }
    await queue.upsertJobScheduler(d.id, d.repeat, { name: TICK_JOB_NAME, data: d.data, opts: TICK_JOB_OPTIONS });
    result.upserted.push(d.id);
  }
  const wanted = new Set(desired.map((d) => d.id));
  for (const [id, s] of existing) {
    if (wanted.has(id)) continue;
    await removeScheduler(queue, s);
    result.removed.push(id);
  }
  return result;
}
