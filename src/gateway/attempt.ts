import { type ErrorKind } from '../errors.js';
import { type Operation } from '../domain/spec.js';

/** Everything the audit row records about one HTTP attempt. Never holds the key. */
export interface AttemptRecord {
  operation: Operation;
  request: Record<string, unknown>;
  httpStatus: number | null;
  code: number | null;
  message: string | null;
  outcome: string | null;
  billed: boolean;
  units: number | null;
  executionId: string | null;
  invocationId: string | null;
  errorKind: ErrorKind | null;
  errorDetail: string | null;
  retryAfterMs: number | null;
  /** The request never left: no connection was made to send it on (refused, not resolved, not opened in time). */
  unsent?: boolean;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
}

/** What an attempt that got no HTTP answer knows of one: nothing, and so nothing billed that it saw. */
export const NO_ANSWER = {
  httpStatus: null,
  code: null,
  message: null,
  outcome: null,
  billed: false,
  units: null,
  executionId: null,
  invocationId: null,
  retryAfterMs: null,
} as const satisfies Partial<AttemptRecord>;

export type Attempt<R> =
  { ok: true; record: AttemptRecord; result: R } | { ok: false; record: AttemptRecord; cause: unknown };
