/**
 * Waiting in tests: poll a condition until it holds, with a deadline, never a fixed sleep. A leaf
 * (no service, database or queue import), so that unit tests can use it too.
 */

/** Polls `probe` until it returns something truthy, and returns that; throws once `timeoutMs` has passed. */
export async function waitFor<T>(
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
  what = 'condition',
  pollMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
