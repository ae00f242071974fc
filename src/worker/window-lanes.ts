/**
 * The lanes of a window read: once a walk's rate is known, call slots (the window's fair share,
 * and idle ones) run parts of it at once. Each call comes back as a value, handed on in the order
 * calls land; once a read has failed no new call starts, and the calls in flight are still awaited.
 */
import { NO_FILTERS } from '../domain/filters.js';
import { earthquakeRequest } from '../planning/earthquake-request.js';
import {
  learnShared,
  nextQueries,
  splitForLanes,
  taskKey,
  type Query,
  type SharedCap,
} from '../planning/truncation/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { claimProbe, releaseProbe } from '../db/gateway-knowledge.js';
import { earthquakeCall, jobCall } from './call.js';
import { gatewayKey, sharedFacts } from './gateway-facts.js';
import type { Landed, WindowRead } from './window-read.js';

/** How long a worker's claim on the cap probe lasts: others wait at most this long for its answer. */
const PROBE_LEASE_MS = 60_000;
const PROBE_POLL_MS = 200;

/** `call_purpose` of the audit row of each kind of query. */
const PURPOSE = { walk: 'walk', scan: 'scan', probe: 'cap-probe' } as const satisfies Record<Query['purpose'], string>;

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

/** Whether what other reads learned meanwhile settles every answer waiting for the probe. */
async function probeSettled(read: WindowRead): Promise<SharedCap | null> {
  const facts = await sharedFacts(read.deps);
  const known = { floor: facts.capFloor, measured: facts.measuredCap };
  return learnShared(read.frontier, known).tasks.some((t) => t.kind === 'probe') ? null : known;
}

/**
 * Before a probe is paid for: what others learned may settle it, and while another worker holds
 * the probe (windows whose cap lapsed together all ask at once) this one waits for its answer, at
 * most the length of its claim. Null: this read makes the probe.
 *
 * What others learned is read again once the claim is won: a probe that answered between the
 * first read and the claim freed the claim after sharing what it learned, and would otherwise be
 * paid for twice.
 */
async function awaitProbe(read: WindowRead): Promise<SharedCap | null> {
  const { db } = read.deps;
  const key = gatewayKey(read.deps);
  const deadline = Date.now() + PROBE_LEASE_MS;
  for (;;) {
    const known = await probeSettled(read);
    if (known !== null) return known;
    if (await claimProbe(db, key, PROBE_LEASE_MS)) {
      const since = await probeSettled(read);
      if (since !== null) await releaseProbe(db, key);
      return since;
    }
    if (Date.now() >= deadline || read.ctx.stopping?.()) return null;
    await sleep(PROBE_POLL_MS);
  }
}

/** One query on a call slot; whatever happens comes back as a value, so that other lanes go on. */
async function send(read: WindowRead, key: string, query: Query): Promise<Landed> {
  const { job, ctx, deps, backfillId } = read;
  const call = jobCall(job, ctx, PURPOSE[query.purpose], backfillId);
  try {
    const probe = query.purpose === 'probe';
    const known = probe ? await awaitProbe(read) : null;
    if (known !== null) return { key, query, known };
    const request = earthquakeRequest(query.unfiltered ? NO_FILTERS : job.filters, query);
    const made = await earthquakeCall(deps, call, request, ctx);
    // An answered probe frees the claim as it is recorded; a failed one frees it here.
    if (probe && !made.attempt.ok) await releaseProbe(deps.db, gatewayKey(deps)).catch(() => undefined);
    return { key, query, call, made };
  } catch (error) {
    if (query.purpose === 'probe') await releaseProbe(deps.db, gatewayKey(deps)).catch(() => undefined);
    return { key, query, error };
  }
}
