import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  checkBoundary,
  checkFlag,
  checkOrder,
  checkRatio,
  checkSilentCap,
  checkTimePrecision,
  resolveBehaviour,
} from './behaviour.js';
import { loadEmulatorData } from './data.js';
import { plainError } from './envelope.js';
import { FaultPlan } from './faults.js';
import { handleRequest, type HandlerState } from './handler.js';
import { sendJson } from './http-io.js';
import { LiveCatalog } from './live-catalog.js';
import { liveControl } from './live-control.js';
import { resolveLiveSpec } from './live-timer.js';
import { deriveRng } from './rng.js';
import { validateSwarms } from './swarm.js';
import type { EmulatorCall, EmulatorOptions, RunningEmulator } from './types.js';

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
  // Every knob is checked before the data loads, so a typo fails fast.
  const behaviour = resolveBehaviour(options);
  const swarms = validateSwarms(options.swarms ?? []);
  const liveOption = options.live ? resolveLiveSpec(options.live) : null;
  if (liveOption && options.tile) throw new RangeError('live cannot be combined with tile; serve the catalog untiled');
  const latencyMs = checkLatency(options.latencyMs ?? 0);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const data = await loadEmulatorData(options);
  const now = options.now ?? (() => new Date());
  const stop = new AbortController();
  const calls: EmulatorCall[] = [];
  // Published only on changes, which come after `state` exists.
  const catalog = new LiveCatalog(data.events, swarms, seed, options.tile, now, (index) => {
    state.ops.catalog = index;
  });
  const state: HandlerState = {
    key: options.key,
    now,
    ops: {
      now,
      catalog: catalog.index,
      indicators: data.indicators,
      behaviour,
      orderRng: deriveRng(seed, 'order'),
      mixedRng: deriveRng(seed, 'mixed'),
      emptyAs: options.emptyAs ?? 'array',
    },
    faults: new FaultPlan(options.faults ?? [], deriveRng(seed, 'faults')),
    idRng: deriveRng(seed, 'ids'),
    latencyMs,
    retryAfterSeconds,
    calls,
    executions: 0,
    closing: stop.signal,
  };
  const live = liveControl(catalog, liveOption);
  // Before the port opens: an empty catalog without a window fails without leaving a server behind.
  if (liveOption) live.startLive();

  const server = createServer((req, res) => {
    handleRequest(state, req, res).catch(() => {
      // A bug or an aborted upload: answer 500 if still possible, and never take the server down.
      sendJson(res, 500, plainError(500, 'internal error'));
    });
  });
  let address: AddressInfo;
  try {
    address = await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  } catch (err) {
    live.stopLive();
    throw err;
  }
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closed: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    calls,
    ...live,
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        live.stopLive();
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
      behaviour.order = checkOrder(order);
    },
    setMixedRandomRatio(ratio) {
      behaviour.mixedRandomRatio = checkRatio(ratio);
    },
    setTimePrecision(precision) {
      behaviour.timePrecision = checkTimePrecision(precision);
    },
    setStartBoundary(boundary) {
      behaviour.startBoundary = checkBoundary('startBoundary', boundary);
    },
    setEndBoundary(boundary) {
      behaviour.endBoundary = checkBoundary('endBoundary', boundary);
    },
    setIgnoreFractionalSeconds(ignore) {
      behaviour.ignoreFractionalSeconds = checkFlag('ignoreFractionalSeconds', ignore);
    },
    setSilentCap(cap) {
      behaviour.silentCap = checkSilentCap(cap);
    },
    setSwarms(next) {
      catalog.setSwarms(validateSwarms(next));
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
    reviseIndicator(revision) {
      // The World Bank writes its marker as a date; the emulator clock says which.
      const lastUpdated = revision.lastUpdated ?? now().toISOString().slice(0, 10);
      return data.indicators.revise({ ...revision, lastUpdated });
    },
  };
}

/** Resolves with the bound address (port 0 picks a free one); rejects on EADDRINUSE and the like. */
function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
