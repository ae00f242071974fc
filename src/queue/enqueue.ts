import type { Job, Queue } from 'bullmq';
import { isRedisOutOfMemory, ServiceUnavailableError } from '../errors.js';

export interface JobToAdd<T> {
  jobId: string;
  data: T;
}

export interface EnqueueResult {
  added: string[];
  alreadyQueued: string[];
}

/**
 * Jobs looked up together: their Redis commands are sent back to back on the queue's connection
 * (ioredis pipelines what is in flight), so planning 50 years of windows costs a few round trips
 * per batch instead of two per job.
 */
const LOOKUP_BATCH = 200;
const ADD_BATCH = 500;

/**
 * Adds jobs by deterministic id. A retained completed or failed job blocks its id, so such a job is
 * removed first; a waiting, delayed or active one is left alone (the work is already queued).
 */
export async function enqueueJobs<T>(queue: Queue, jobs: JobToAdd<T>[]): Promise<EnqueueResult> {
  const result: EnqueueResult = { added: [], alreadyQueued: [] };
  return addJobs(queue, jobs, result).catch((e: unknown) => {
    throw isRedisOutOfMemory(e) ? refusedForMemory(queue, jobs.length, result, e) : e;
  });
}

/**
 * Redis out of memory refuses every write until memory is freed: said plainly, with what was queued.
 * The partitions are in PostgreSQL already, and a worker's reconciler queues the rest once it can.
 */
function refusedForMemory(queue: Queue, asked: number, done: EnqueueResult, cause: unknown): ServiceUnavailableError {
  const queued = done.added.length + done.alreadyQueued.length;
  return new ServiceUnavailableError(
    `Redis refuses writes: it is out of memory (used_memory reached maxmemory; under maxmemory-policy ` +
      `noeviction, as BullMQ needs, every write fails until memory is freed or maxmemory raised). ` +
      `${queued} of ${asked} jobs are queued (queue ${queue.name}); the rest are recorded in PostgreSQL and a running ` +
      `worker queues them within 30 s of Redis taking writes again (or run this command again)`,
    { cause },
  );
}

async function addJobs<T>(queue: Queue, jobs: JobToAdd<T>[], result: EnqueueResult): Promise<EnqueueResult> {
  const fresh: JobToAdd<T>[] = [];
  for (let i = 0; i < jobs.length; i += LOOKUP_BATCH) {
    const batch = jobs.slice(i, i + LOOKUP_BATCH);
    const existing = await Promise.all(batch.map((job) => queue.getJob(job.jobId)));
    const states = await Promise.all(existing.map((job) => (job ? job.getState() : Promise.resolve(null))));
    const retained: Job[] = [];
    batch.forEach((job, k) => {
      const found = existing[k];
      const state = states[k];
      if (!found) {
        fresh.push(job);
      } else if (state === 'completed' || state === 'failed' || state === 'unknown') {
        retained.push(found);
        fresh.push(job);
      } else {
        result.alreadyQueued.push(job.jobId);
      }
    });
    await Promise.all(retained.map((job) => job.remove().catch(() => undefined)));
  }
  for (let i = 0; i < fresh.length; i += ADD_BATCH) {
    const batch = fresh.slice(i, i + ADD_BATCH);
    await queue.addBulk(batch.map((j) => ({ name: queue.name, data: j.data, opts: { jobId: j.jobId } })));
    result.added.push(...batch.map((j) => j.jobId));
  }
  return result;
}
