import type { Rng } from './rng.js';

/**
 * Failures the emulator can play. Each stands for a way the real gateway or the network can let a
 * client down; `schema_break` and `malformed_json` are the nasty ones because they are billed.
 */
export const FAULT_KINDS = [
  'server_error',
  'rate_limited',
  'data_source',
  'unknown_result',
  'connection_reset',
  'malformed_json',
  'schema_break',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  kind: FaultKind;
  /** Chance per eligible request, 0 to 1. */
  probability: number;
}

export function isFaultKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value);
}

export function validateFaultRules(rules: readonly FaultRule[]): FaultRule[] {
  return rules.map((r) => {
    if (!isFaultKind(r.kind)) throw new RangeError(`unknown fault kind ${String(r.kind)}`);
    if (!(r.probability >= 0 && r.probability <= 1)) {
      throw new RangeError(`fault ${r.kind}: probability must be between 0 and 1, got ${r.probability}`);
    }
    return { kind: r.kind, probability: r.probability };
  });
}

/**
 * Decides the fault (if any) for one eligible request: queued faults first, in order, so a test can
 * script "the next two calls fail"; then each rule rolls its own die, first hit wins.
 */
export class FaultPlan {
  private queue: FaultKind[] = [];
  private rules: FaultRule[];

  constructor(
    rules: readonly FaultRule[],
    private readonly rng: Rng,
  ) {
    this.rules = validateFaultRules(rules);
  }

  setRules(rules: readonly FaultRule[]): void {
    this.rules = validateFaultRules(rules);
  }

  inject(kind: FaultKind, count: number): void {
    if (!isFaultKind(kind)) throw new RangeError(`unknown fault kind ${String(kind)}`);
    if (!Number.isInteger(count) || count < 0) throw new RangeError(`fault count must be a whole number, got ${count}`);
    for (let i = 0; i < count; i++) this.queue.push(kind);
  }

  get pending(): number {
    return this.queue.length;
  }

  clear(): void {
    this.queue = [];
  }

  next(): FaultKind | null {
    const queued = this.queue.shift();
    if (queued) return queued;
    for (const rule of this.rules) {
      if (this.rng() < rule.probability) return rule.kind;
    }
    return null;
  }
}
