/**
 * Outcome values. The spec names only `succeeded`; the others are our choice, worded so that a
 * client guessing from the words (as src/gateway/errors.ts does) lands on the right kind.
 */
export const OUTCOME = {
  succeeded: 'succeeded',
  parameterError: 'parameter_error',
  dataSourceError: 'data_source_error',
  unknown: 'unknown',
} as const;
export type Outcome = (typeof OUTCOME)[keyof typeof OUTCOME];

export interface ExecutionRecord {
  id: string;
  invocation_id: string;
  outcome: Outcome;
  usage: { units: number };
  timing: { started_at: string; finished_at: string; duration_ms: number };
}

export interface Envelope {
  code: number;
  message: string;
  data: { execution: ExecutionRecord; result: unknown };
}

/** Bodies without an execution (401, 404, 405, 429, 500): the gateway never ran the operation. */
export interface PlainError {
  code: number;
  message: string;
}

export function plainError(code: number, message: string): PlainError {
  return { code, message };
}
