import type { Db } from '../db/connection.js';
import type { Gateway } from '../gateway/client.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { Log } from '../log.js';
import type { TruncationMemory } from './truncation-memory.js';

/** Observes calls and writes; the service wires Prometheus here, tests and the CLI may not. */
export interface CallObserver {
  onCall(record: AttemptRecord, rowsWritten: number): void;
}

export interface ProcessorDeps {
  gateway: Gateway;
  db: Db;
  log: Log;
  truncation: TruncationMemory;
  observer?: CallObserver;
}

export interface JobContext {
  jobId: string | null;
  /** 1-based attempt number of the job. */
  attempt: number;
  signal?: AbortSignal;
}
