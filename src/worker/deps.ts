import type { Db } from '../db/connection.js';
import type { Gateway } from '../gateway/client.js';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { Log } from '../log.js';
import type { Operation } from '../domain/spec.js';
import type { CallSlots } from './slots.js';

/** Observes calls and writes; the service wires Prometheus here, tests and the CLI may not. */
export interface CallObserver {
  onCall(record: AttemptRecord, rowsWritten: number): void;
  /** A liveness probe (worker/call.ts): kept apart from calls, its refusal being the expected answer. */
  onLivenessProbe?(record: AttemptRecord): void;
}

export interface ProcessorDeps {
  gateway: Gateway;
  db: Db;
  log: Log;
  /** How long what was learned of a gateway's cap is trusted (GATEWAY_KNOWLEDGE_TTL_MS). */
  knowledgeTtlMs: number;
  observer?: CallObserver;
  /** BILLED_CALLS_PER_DAY (null or absent: counted, not capped). */
  budget?: { billedCallsPerDay: number | null };
}

export interface JobContext {
  jobId: string | null;
  /** 1-based attempt number of the job. */
  attempt: number;
  /** Aborted at the shutdown deadline: calls still in flight then are cut off. */
  signal?: AbortSignal;
  /** True once shutdown began: no new gateway call may start. */
  stopping?: () => boolean;
  /**
   * From this count of failed attempts of the partition in a row on, a timeout is followed by a liveness
   * probe, so that a silent gateway is waited out like one that refuses connections, and is not sent
   * queries meanwhile (`silentOperations`). Absent (no outage grace, a plan's sample): never probed.
   */
  probeTimeoutsFrom?: number;
  /**
   * The operations whose gateway a liveness probe last found silent, shared by the process's jobs:
   * their queries wait behind a probe until one is answered (worker/call.ts `unlessSilent`).
   */
  silentOperations?: Set<Operation>;
  /** The process's gateway call slots, and how many calls one window may have in flight at once. */
  lanes?: { slots: CallSlots; max: number };
}
