/** Exit codes of every command: 0 success, 1 some work failed, 2 bad usage or invalid input. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Bad flags, bad config or bad input: exit 2, and nothing was changed. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A service (Postgres, Redis, the gateway) could not be reached: exit 1 with how to fix it. */
export class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
}
