import { type Operation } from './spec.js';

/**
 * A result that still looks plausible but breaks spec 2.3/2.4 in one field, the way a real
 * upstream change would: a missing required number, or a number sent as a string.
 */
export function breakResult(operation: Operation, result: unknown): unknown {
  const copy = structuredClone(result) as Record<string, unknown>;
  if (operation === 'earthquake') {
    const events = copy['events'];
    if (Array.isArray(events) && events.length > 0) {
      delete (events[0] as Record<string, unknown>)['latitude'];
    } else {
      copy['events'] = 'none';
    }
  } else {
    const values = copy['values'];
    if (Array.isArray(values) && values.length > 0) {
      const first = values[0] as Record<string, unknown>;
      first['value'] = String(first['value']);
    } else {
      copy['values'] = 'none';
    }
  }
  return copy;
}
