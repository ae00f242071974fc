import type { Job, Queue } from 'bullmq';

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
