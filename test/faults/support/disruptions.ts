/** Something a scenario did to the system: `kill -9` of a worker, or an outage of one of its services. */
export interface Disruption {
  kind: 'kill' | 'outage';
  /** Wall-clock span; a kill is an instant. */
  from: number;
  to: number;
}

/** An answer read longer than this before a disruption has had ample time to commit: a commit takes milliseconds. */
export const COMMIT_SLACK_MS = 1_000;

/**
 * Whether a call was caught between its request and its commit by the disruption: sent before it
 * ended, and answered no earlier than just before it began (or never).
 */
export function caughtBy(sentAt: number, answeredAt: number | null, d: Disruption): boolean {
  return sentAt <= d.to && (answeredAt === null || answeredAt >= d.from - COMMIT_SLACK_MS);
}

export function caughtByAny(sentAt: number, answeredAt: number | null, ds: readonly Disruption[]): boolean {
  return ds.some((d) => caughtBy(sentAt, answeredAt, d));
}
