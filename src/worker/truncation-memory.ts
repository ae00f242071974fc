import type { OrderVerdict } from '../planning/truncation.js';

/**
 * What a probe proved about how a gateway truncates, remembered for `ttlMs` so later windows skip
 * the probe. A TTL of 0 probes in every window (paranoid mode for gateways that may change).
 */
export class TruncationMemory {
  readonly #verdicts = new Map<string, { order: Exclude<OrderVerdict, 'unknown'>; atMs: number }>();
  constructor(
    readonly ttlMs: number,
    private readonly nowMs: () => number = Date.now,
  ) {}

  get(key: string): OrderVerdict {
    const v = this.#verdicts.get(key);
    if (!v || this.nowMs() - v.atMs >= this.ttlMs) return 'unknown';
    return v.order;
  }

  set(key: string, verdict: OrderVerdict): void {
    if (verdict === 'unknown') this.#verdicts.delete(key);
    else this.#verdicts.set(key, { order: verdict, atMs: this.nowMs() });
  }
}
