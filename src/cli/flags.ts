import { isRfc3339 } from '../gateway/time.js';
import { UsageError } from './exit.js';

/** RFC 3339 timestamp, or a YYYY-MM-DD date meaning UTC midnight. */
export function parseInstantFlag(flag: string, value: string): number {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  const ms = isRfc3339(date) ? Date.parse(date) : NaN;
  if (Number.isNaN(ms) || (date !== value && new Date(ms).toISOString().slice(0, 10) !== value)) {
    throw new UsageError(`${flag}: "${value}" is not an RFC 3339 timestamp or a YYYY-MM-DD date`);
  }
  return ms;
}

export function parseNumberFlag(flag: string, value: string | undefined, range: { min: number; max: number; minExclusive?: boolean }): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  const low = range.minExclusive ? n > range.min : n >= range.min;
  if (value.trim() === '' || !Number.isFinite(n) || !low || n > range.max) {
    const lower = range.minExclusive ? `above ${range.min}` : `from ${range.min}`;
    throw new UsageError(`${flag}: "${value}" must be a number ${lower} to ${range.max}`);
  }
  return n;
}

export function parseYearFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}$/.test(value)) throw new UsageError(`${flag}: "${value}" must be a four-digit year`);
  return Number(value);
}

/** Comma-separated and repeatable: `--country US,CHN --country WLD`. */
export function collectList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((v) => v.trim()).filter((v) => v.length > 0)];
}
