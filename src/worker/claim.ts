/**
 * One reader per partition. BullMQ may hand a job out twice (a worker stalled under load, a queue
 * lost and refilled while the first copy still runs); two copies would send every query twice and
 * pay twice. A run claims its partition in PostgreSQL for CLAIM_MS, renews it while it runs, and
 * makes no new call once the claim is lost; a copy that finds the partition claimed waits.
 */
import { randomUUID } from 'node:crypto';
import { claimPartition, releaseClaim, renewClaim, type PartitionRef } from '../db/partitions.js';
import type { Db } from '../db/connection.js';
import type { Log } from '../log.js';
import { isConnectionError } from '../errors.js';

/**
 * A killed worker's partition is free this long after its last renewal (BullMQ hands its job out
 * within about as long).
 */
export const CLAIM_MS = 10_000;
const RENEW_MS = CLAIM_MS / 3;

export interface Claim {
  /** True once another run took the partition over: no new call may start. */
  lost(): boolean;
  release(): Promise<void>;
}

/** The claim, or null when another live run holds the partition. */
export async function claim(db: Db, ref: PartitionRef, log: Log): Promise<Claim | null> {
  const runId = randomUUID();
  if (!(await claimPartition(db, ref, runId, CLAIM_MS))) return null;
  let lost = false;
  const timer = setInterval(() => {
    renewClaim(db, ref, runId, CLAIM_MS)
      .then((held) => {
        if (!held && !lost)
          log.warn(
            { stream: ref.streamKey, partition: ref.partitionKey },
            'partition taken over by another run: no new call from this one',
          );
        lost ||= !held;
      })
      // The database away: no call can start anyway (its audit row cannot be written); keep trying.
      .catch((e: unknown) => {
        if (!isConnectionError(e))
          log.warn({ err: e instanceof Error ? e.message : String(e) }, 'could not renew the partition claim');
      });
  }, RENEW_MS);
  timer.unref();
  return {
    lost: () => lost,
    async release() {
      clearInterval(timer);
      await releaseClaim(db, ref, runId).catch(() => undefined);
    },
  };
}
