/**
 * Durations as written in jobs.yaml: a positive whole number and one unit, `30s`, `10m`, `6h`, `7d`.
 * No spaces, no fractions, no compound forms (`1h30m`), no upper-case units (`10M` would be ambiguous).
 */

export const DURATION_UNITS_MS = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
} as const;

export type DurationUnit = keyof typeof DURATION_UNITS_MS;

const DURATION = /^([1-9][0-9]*)([smhd])$/;

/** How a bad duration is explained to the operator, in one place so messages and docs agree. */
export const DURATION_RULE = 'must be a duration: a positive whole number and a unit s, m, h or d (30s, 10m, 6h, 7d)';

/** Milliseconds of a duration such as `10m`, or null when the text is not a valid duration. */
export function parseDurationMs(text: string): number | null {
  const m = DURATION.exec(text);
  if (!m) return null;
  const unit = m[2] as DurationUnit;
  const ms = Number(m[1]) * DURATION_UNITS_MS[unit];
  return Number.isSafeInteger(ms) ? ms : null;
}

/** The shortest exact form of a positive duration (`604800000` -> `7d`, `90000` -> `90s`). */
export function formatDurationMs(ms: number): string {
  const units: DurationUnit[] = ['d', 'h', 'm', 's'];
  for (const unit of units) {
    const size = DURATION_UNITS_MS[unit];
    if (ms > 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
