/**
 * The service's audit retention: once at start and then every `intervalMs` (hourly), audit rows
 * past AUDIT_RETENTION_DAYS are rolled up into gateway_cost_rollup and deleted, batch after batch
 * (db/retention.ts), until none is left. A failed run is logged and tried again at the next one.
 */
import type { Db } from '../db/connection.js';
import { retentionCutoff, rollUpBatch } from '../db/retention.js';
import type { Log } from '../log.js';

export const RETENTION_INTERVAL_MS = 3_600_000;
/** Rows per transaction: short enough not to hold locks long, large enough to catch up quickly. */
export const RETENTION_BATCH_ROWS = 5_000;

export interface RetentionOptions {
  db: Db;
  log: Log;
  retentionDays: number;
  intervalMs?: number;
  batchRows?: number;
  now?: () => number;
}

export interface RetentionRun {
  rows: number;
  batches: number;
}

export interface RunningRetention {
  /** One full run (what the timer does); a run already going is awaited rather than doubled. */
  runOnce(): Promise<RetentionRun>;
  stop(): Promise<void>;
}

export function startRetention(o: RetentionOptions): RunningRetention {
  let stopping = false;
  let current: Promise<RetentionRun> | null = null;

  const run = async (): Promise<RetentionRun> => {
    const cutoff = retentionCutoff((o.now ?? Date.now)(), o.retentionDays);
    const total: RetentionRun = { rows: 0, batches: 0 };
    while (!stopping) {
      const batch = await rollUpBatch(o.db, cutoff, o.batchRows ?? RETENTION_BATCH_ROWS);
      if (batch.rows === 0) break;
      total.rows += batch.rows;
      total.batches++;
    }
    if (total.rows > 0)
      o.log.info(
        { rows: total.rows, batches: total.batches, before: cutoff.toISOString() },
        'audit rows past retention rolled up into gateway_cost_rollup and deleted',
      );
    return total;
  };

  const runOnce = (): Promise<RetentionRun> => {
    current ??= run().finally(() => {
      current = null;
    });
    return current;
  };

  const tick = () => {
    runOnce().catch((err: unknown) => o.log.warn({ err }, 'audit retention failed; trying again at the next run'));
  };
  tick();
  const timer = setInterval(tick, o.intervalMs ?? RETENTION_INTERVAL_MS);
  timer.unref();

  return {
    runOnce,
    async stop() {
      stopping = true;
      clearInterval(timer);
      await current?.catch(() => undefined);
    },
  };
}
