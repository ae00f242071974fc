/**
 * Indicator history as gateway-sized year chunks. Unlike time windows, chunks never share a year:
 * years are whole units, so each one is requested exactly once.
 */
import { LIMITS, yearSpan } from '../domain/spec.js';
import { type Range, subtractRanges } from '../domain/ranges.js';

/** Both ends inclusive; startYear <= endYear. */
export interface YearChunk {
  startYear: number;
  endYear: number;
}

export interface PlanChunksArgs {
  fromYear: number;
  toYear: number;
  /** Longest chunk, counted inclusively with `yearSpan`; defaults to `LIMITS.maxYearSpan`. */
  maxYears?: number;
  /** Years already ingested for the same series; only the rest are planned. */
  coveredYears?: readonly Range[];
}

export interface YearRange {
  fromYear: number;
  toYear: number;
}

export interface ResolveYearRangeArgs {
  fromYear?: number;
  toYear?: number;
  currentYear: number;
}

/** Digits only: a minus sign would make the separator ambiguous, and planned years are never negative. */
const CHUNK_KEY = /^(\d+)-(\d+)$/;

export function planChunks({
  fromYear,
  toYear,
  maxYears = LIMITS.maxYearSpan,
  coveredYears = [],
}: PlanChunksArgs): YearChunk[] {
  assertYear(fromYear, 'fromYear');
  assertYear(toYear, 'toYear');
  if (fromYear > toYear) throw new RangeError(`fromYear ${fromYear} is after toYear ${toYear}`);
  if (!Number.isSafeInteger(maxYears) || maxYears < 1) {
    throw new RangeError(`maxYears must be a whole number of at least 1, got ${maxYears}`);
  }
  return subtractRanges({ start: fromYear, end: toYear }, coveredYears, 1).flatMap((gap) => splitYears(gap, maxYears));
}

/**
 * The gateway's defaults (end: current year, start: nine years before the end), made explicit
 * because every chunk is sent with both years. The default start is clamped to the first year:
 * sent explicitly, an earlier year is rejected, and the caller never asked for it.
 */
export function resolveYearRange({ fromYear, toYear, currentYear }: ResolveYearRangeArgs): YearRange {
  assertYear(currentYear, 'currentYear');
  const to = toYear ?? currentYear;
  const from = fromYear ?? Math.max(LIMITS.firstYear, to - 9);
  assertYear(to, 'toYear');
  assertYear(from, 'fromYear');
  if (to > currentYear) throw new RangeError(`toYear ${to} is after the current year ${currentYear}`);
  if (to < LIMITS.firstYear) {
    throw new RangeError(`toYear ${to} is before ${LIMITS.firstYear}, the first year with data`);
  }
  if (from < LIMITS.firstYear) {
    throw new RangeError(`fromYear ${from} is before ${LIMITS.firstYear}, the first year with data`);
  }
  if (from > to) throw new RangeError(`fromYear ${from} is after toYear ${to}`);
  return { fromYear: from, toYear: to };
}

/** `1960-2029`: stable across runs, so it can name a job. */
export function chunkKey(chunk: YearChunk): string {
  return `${chunk.startYear}-${chunk.endYear}`;
}

/** Accepts only what `chunkKey` produces (no leading zeros), so one chunk never has two keys. */
export function parseChunkKey(key: string): YearChunk {
  const match = CHUNK_KEY.exec(key);
  if (match === null) throw new RangeError(`not a chunk key (expected <year>-<year>): ${JSON.stringify(key)}`);
  const chunk = { startYear: Number(match[1]), endYear: Number(match[2]) };
  if (chunkKey(chunk) !== key) throw new RangeError(`chunk key is not in canonical form: ${key}`);
  if (chunk.startYear > chunk.endYear) throw new RangeError(`chunk key ends before it starts: ${key}`);
  return chunk;
}

function assertYear(year: number, label: string): void {
  if (!Number.isSafeInteger(year)) throw new RangeError(`${label} must be a whole year, got ${year}`);
}

function splitYears(gap: Range, maxYears: number): YearChunk[] {
  const chunks: YearChunk[] = [];
  for (let startYear = gap.start; startYear <= gap.end; startYear += maxYears) {
    const span = Math.min(maxYears, yearSpan(startYear, gap.end));
    chunks.push({ startYear, endYear: startYear + span - 1 });
  }
  return chunks;
}
