import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { OUTCOME, plainError, type Envelope, type Outcome } from './envelope.js';
import type { FaultKind, FaultPlan } from './faults.js';
import { credentialMatches, isJsonContentType, readBody, sendJson, sendText, sleep } from './http-io.js';
import { execute, type OperationContext } from './operations.js';
import { randomHex, type Rng } from './rng.js';
import { breakResult } from './schema-break.js';
import type { EmulatorCall } from './types.js';
import { stripInvocationId } from './validation.js';
import { OPERATIONS, type Operation } from './spec.js';

const BODY_LIMIT_BYTES = 1 << 20;

/** Everything one request needs; `ops.behaviour`, `ops.catalog` and `latencyMs` change at run time via the handle. */
export interface HandlerState {
  key: string;
  now: () => Date;
  ops: OperationContext;
  faults: FaultPlan;
  idRng: Rng;
  latencyMs: number;
  retryAfterSeconds: number;
  calls: EmulatorCall[];
  executions: number;
  /** Aborted by close(): pending latency waits end and their requests are dropped unrecorded. */
  closing: AbortSignal;
}

function operationOf(path: string): Operation | null {
  if (path === OPERATIONS.earthquake.path) return 'earthquake';
  if (path === OPERATIONS.indicator.path) return 'indicator';
  return null;
}

export async function handleRequest(state: HandlerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const at = state.now();
  const t0 = performance.now();
  const path = new URL(req.url ?? '/', 'http://emulator').pathname;
  const operation = operationOf(path);
  const { text, tooLarge } = await readBody(req, BODY_LIMIT_BYTES);
  const authorized = credentialMatches(req.headers, state.key);
  await sleep(state.latencyMs, state.closing);
  if (state.closing.aborted) {
    res.socket?.destroy();
    return;
  }
  const call: EmulatorCall = {
    at,
    operation,
    path,
    body: text === '' ? null : text,
    hadInvocationId: false,
    authorized,
    httpStatus: null,
    outcome: null,
    billed: false,
    units: 0,
    returned: 0,
    matched: 0,
    truncated: false,
    order: null,
    executionId: null,
    fault: null,
  };
  // The call is logged before the answer leaves, so a client that has its answer sees its record.
  const reply = (status: number, body: unknown, headers?: Record<string, string>): void => {
    call.httpStatus = status;
    state.calls.push(call);
    sendJson(res, status, body, headers);
  };
  const envelope = (code: number, message: string, outcome: Outcome, units: number, result: unknown): Envelope => {
    const id = `exec_${++state.executions}`;
    const durationMs = Math.round(performance.now() - t0);
    call.executionId = id;
    call.outcome = outcome;
    call.billed = outcome === OUTCOME.succeeded;
    call.units = call.billed ? units : 0;
    return {
      code,
      message,
      data: {
        execution: {
          id,
          invocation_id: `inv_${randomHex(state.idRng, 16)}`,
          outcome,
          usage: { units: call.units },
          timing: {
            started_at: at.toISOString(),
            finished_at: new Date(at.getTime() + durationMs).toISOString(),
            duration_ms: durationMs,
          },
        },
        result,
      },
    };
  };
  const parameterError = (message: string): void => reply(400, envelope(400, message, OUTCOME.parameterError, 0, null));

  if (operation === null) return reply(404, plainError(404, 'not found'));
  if (req.method !== 'POST') return reply(405, plainError(405, 'method not allowed'), { allow: 'POST' });
  if (!authorized) {
    return reply(401, plainError(401, 'invalid or missing credential'), { 'www-authenticate': 'Bearer' });
  }
  if (tooLarge) return reply(413, plainError(413, 'request body too large'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return parameterError('body: must be valid JSON');
  }
  call.body = parsed;
  const { body, hadInvocationId } = stripInvocationId(parsed);
  call.hadInvocationId = hadInvocationId;
  if (!isJsonContentType(req.headers)) return parameterError('content-type: must be application/json');

  const done = execute(operation, body, state.ops);
  if (done.kind === 'parameter_error') return parameterError(done.message);

  // Faults hit only requests that would otherwise succeed, so a scripted fault is never used up
  // by a 401 or a 400 that a test sends in between.
  const fault: FaultKind | null = state.faults.next();
  call.fault = fault;
  const delivered = (): void => {
    call.returned = done.units;
    call.matched = done.matched;
    call.truncated = done.truncated;
    call.order = done.order;
  };
  switch (fault) {
    case 'server_error':
      return reply(500, plainError(500, 'internal error'));
    case 'rate_limited':
      return reply(429, plainError(429, 'too many requests'), { 'retry-after': String(state.retryAfterSeconds) });
    case 'data_source':
      return reply(502, envelope(502, 'data source error', OUTCOME.dataSourceError, 0, null));
    case 'unknown_result':
      return reply(504, envelope(504, 'result unknown', OUTCOME.unknown, 0, null));
    case 'connection_reset':
      state.calls.push(call);
      res.socket?.destroy();
      return;
    case 'malformed_json': {
      // Billed: the gateway finished and metered the call; only the bytes on the wire are broken.
      delivered();
      const whole = JSON.stringify(envelope(0, 'ok', OUTCOME.succeeded, done.units, done.result));
      call.httpStatus = 200;
      state.calls.push(call);
      return sendText(res, 200, whole.slice(0, Math.floor(whole.length / 2)));
    }
    case 'schema_break':
      delivered();
      return reply(200, envelope(0, 'ok', OUTCOME.succeeded, done.units, breakResult(done.operation, done.result)));
    case null:
      delivered();
      return reply(200, envelope(0, 'ok', OUTCOME.succeeded, done.units, done.result));
  }
}
