import type { EmulatorCall } from '@gateway-ingest/emulator';
import { canonicalBody } from './audit-reconcile.js';

export interface Repeat {
  call: EmulatorCall;
  /** How many times this request has been paid for, this call included. */
  times: number;
  /** The earlier paid copies whose answers the client had: if none of them was committed, the answer was lost. */
  earlier: EmulatorCall[];
  /** No earlier paid copy was ever committed: its answer was lost, so asking again was the only way. */
  lostBefore: boolean;
}

/**
 * Billed calls whose request had already been answered, usably, before: paid twice. A request
 * repeated after a billed but unusable answer (malformed, schema-breaking) or one the client never
 * received (`undelivered`: a hung call, a client timeout) is not counted: it had to be asked again.
 * `committed` holds the execution ids whose answers were recorded.
 */
export function repeatedBilled(
  calls: EmulatorCall[],
  undelivered: ReadonlySet<string>,
  committed: ReadonlySet<string>,
): Repeat[] {
  const answered = new Map<string, EmulatorCall[]>();
  const repeats: Repeat[] = [];
  for (const call of calls) {
    if (!call.billed) continue;
    const body = canonicalBody(call.body);
    const earlier = answered.get(body) ?? [];
    if (earlier.length > 0)
      repeats.push({
        call,
        times: earlier.length + 1,
        earlier,
        lostBefore: !earlier.some((c) => committed.has(c.executionId ?? '')),
      });
    const usable = call.fault === null && !(call.executionId !== null && undelivered.has(call.executionId));
    if (usable) answered.set(body, [...earlier, call]);
  }
  return repeats;
}
