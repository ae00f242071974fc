import type { Queue } from 'bullmq';

export interface JobToAdd<T> {
  jobId: string;
  data: T;
}

export interface EnqueueResult {
  added: string[];
  alreadyQueued: string[];
}

/**
 * Adds jobs by deterministic id. A retained completed or failed job blocks its id, so such a job is
 * removed first; a waiting, delayed or active one is left alone (the work is already queued).
 */
export async function enqueueJobs<T>(queue: Queue, jobs: JobToAdd<T>[]): Promise<EnqueueResult> {
  const result: EnqueueResult = { added: [], alreadyQueued: [] };
  const fresh: JobToAdd<T>[] = [];
  for (const job of jobs) {
    const existing = await queue.getJob(job.jobId);
    if (!existing) {
      fresh.push(job);
      continue;
    }
    const state = await existing.getState();
    if (state === 'completed' || state === 'failed' || state === 'unknown') {
      await existing.remove().catch(() => undefined);
      fresh.push(job);
    } else {
      result.alreadyQueued.push(job.jobId);
    }
  }
  for (let i = 0; i < fresh.length; i += 500) {
    const batch = fresh.slice(i, i + 500);
    await queue.addBulk(batch.map((j) => ({ name: queue.name, data: j.data, opts: { jobId: j.jobId } })));
    result.added.push(...batch.map((j) => j.jobId));
  }
  return result;
}
