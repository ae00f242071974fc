/**
 * The lanes of a window read: once a walk's rate is known, call slots (the window's fair share,
 * and idle ones) run parts of it at once. Each call comes back as a value, handed on in the order
 * calls land; once a read has failed no new call starts, and the calls in flight are still awaited.
 */
import { earthquakeRequest } from '../planning/earthquake-request.js';
import { nextQueries, splitForLanes, taskKey, type Query } from '../planning/truncation/index.js';
import { earthquakeCall, jobCall } from './call.js';
import type { Landed, WindowRead } from './window-read.js';

/**
 * Pure: how many queries to send now, at most `max` in flight: one when nothing is in flight, more up
 * to the window's fair share of the call slots, and beyond it only on slots nobody waits for.
 */
export function lanesNow(inFlight: number, max: number, fairShare: number, idle: number): number {
  const own = Math.max(fairShare - inFlight, (inFlight === 0 ? 1 : 0) + idle);
  return Math.max(0, Math.min(max - inFlight, own));
}

/** Sends the read's queries on its lanes until none is left to send or in flight; `land` takes each call back. */
export async function runLanes(
  read: WindowRead,
  land: (landed: Landed, inFlight: number) => Promise<void>,
): Promise<void> {
  const flights = new Map<string, Promise<Landed>>();
  try {
    for (;;) {
      if (read.failure === null) launch(read, flights);
      if (flights.size === 0) return;
      const landed = await Promise.race(flights.values());
      flights.delete(landed.key);
      await land(landed, flights.size);
    }
  } finally {
    // Never leave a call running unobserved: its audit row must be completed before the job lets go.
    await Promise.allSettled(flights.values());
  }
}

/** Fills the free lanes; when the frontier has fewer queries ready than lanes, a task is split for them. */
function launch(read: WindowRead, flights: Map<string, Promise<Landed>>): void {
  const { lanes } = read.ctx;
  const want = lanes
    ? lanesNow(flights.size, lanes.max, lanes.slots.fairShare(), lanes.slots.idle())
    : lanesNow(flights.size, 1, 1, 0);
  const busy = new Set(flights.keys());
  const ready = nextQueries(read.frontier, busy, want).length;
  if (ready < want && flights.size + ready > 0)
    read.frontier = splitForLanes(read.frontier, want - ready, (t) => busy.has(taskKey(t)));
  for (const { key, query } of nextQueries(read.frontier, busy, want)) flights.set(key, send(read, key, query));
}

/** One query on a call slot; whatever happens comes back as a value, so that other lanes go on. */
async function send({ job, ctx, deps, backfillId }: WindowRead, key: string, query: Query): Promise<Landed> {
  const call = jobCall(job, ctx, query.purpose, backfillId);
  try {
    const made = await earthquakeCall(deps, call, earthquakeRequest(job.filters, query), ctx);
    return { key, query, call, made };
  } catch (error) {
    return { key, query, error };
  }
}
