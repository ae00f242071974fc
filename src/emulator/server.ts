import { createServer } from 'node:http';
import { loadEmulatorData } from './data.js';
import { plainError } from './envelope.js';
import { FaultPlan } from './faults.js';
import { handleRequest, type HandlerState } from './handler.js';
import { sendJson } from './http-io.js';
import { deriveRng } from './rng.js';
import { EVENT_ORDERS, type EventOrder } from './selection.js';
import type { EmulatorCall, EmulatorOptions, RunningEmulator } from './types.js';
import { listen } from '../net-listen.js';

function checkOrder(order: EventOrder): EventOrder {
  if (!EVENT_ORDERS.includes(order)) throw new RangeError(`order must be one of ${EVENT_ORDERS.join(', ')}`);
  return order;
}

function checkLatency(ms: number): number {
  if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`latencyMs must be a number >= 0, got ${ms}`);
  return ms;
}

/** Starts a local gateway (spec parts 1-9) on 127.0.0.1; data loads before the port opens. */
export async function startEmulator(options: EmulatorOptions): Promise<RunningEmulator> {
  if (typeof options.key !== 'string' || options.key === '') throw new TypeError('startEmulator: key is required');
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  if (!(Number.isInteger(retryAfterSeconds) && retryAfterSeconds >= 0)) {
    throw new RangeError('retryAfterSeconds must be a whole number >= 0');
  }
  const data = await loadEmulatorData(options);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const now = options.now ?? (() => new Date());
  const stop = new AbortController();
  const calls: EmulatorCall[] = [];
  const state: HandlerState = {
    key: options.key,
    now,
    ops: {
      now,
      catalog: data.catalog,
      indicators: data.indicators,
      order: checkOrder(options.order ?? 'newest'),
      orderRng: deriveRng(seed, 'order'),
      emptyAs: options.emptyAs ?? 'array',
    },
    faults: new FaultPlan(options.faults ?? [], deriveRng(seed, 'faults')),
    idRng: deriveRng(seed, 'ids'),
    latencyMs: checkLatency(options.latencyMs ?? 0),
    retryAfterSeconds,
    calls,
    executions: 0,
    closing: stop.signal,
  };

  const server = createServer((req, res) => {
    handleRequest(state, req, res).catch(() => {
      // A bug or an aborted upload: answer 500 if still possible, and never take the server down.
      sendJson(res, 500, plainError(500, 'internal error'));
    });
  });
  const address = await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    calls,
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        stop.abort();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
    resetCalls() {
      calls.length = 0;
    },
    setOrder(order) {
      state.ops.order = checkOrder(order);
    },
    setLatencyMs(ms) {
      state.latencyMs = checkLatency(ms);
    },
    injectFaults(kind, count) {
      state.faults.inject(kind, count);
    },
    setFaultRules(rules) {
      state.faults.setRules(rules);
    },
  };
}
