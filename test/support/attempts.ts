import { NO_ANSWER, type AttemptRecord } from '../../src/gateway/attempt.js';

/** A failed earthquake attempt with no answer, at `atMs`, changed by `over`. */
export function failedRecord(over: Partial<AttemptRecord>, atMs: number): AttemptRecord {
  return {
    operation: 'earthquake',
    request: { start_time: '2025-05-01T00:00:00Z' },
    ...NO_ANSWER,
    errorKind: 'transport',
    errorDetail: 'no answer',
    startedAt: new Date(atMs),
    finishedAt: new Date(atMs),
    durationMs: 5,
    ...over,
  };
}
