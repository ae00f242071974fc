/**
 * Deletions, proven. After a re-read proved a window complete, a stored event of the stream that
 * no answer of that run returned is a candidate: deleted upstream, or revised out of the stream's
 * filters, or moved in time. It is marked deleted only on proof that the catalog no longer holds
 * it anywhere near its time: an unfiltered answer, too small to be truncated, over its time give
 * or take a revision's move and the precision of its stored time (`reachMs`). For an unfiltered
 * stream the window's own answers are that proof when the event lies well inside the window;
 * otherwise a targeted check asks. An answer that holds the event means it was revised (it is
 * updated, not marked). Pure: the caller makes the calls and writes.
 */
import { MINUTE_MS, reportedPrecisionMs, SECOND_MS } from '../domain/time.js';
import type { Region } from './truncation/frontier.js';

/** How far a revision may move an event's time and still be found by a check around its old time. */
export const MOVE_MS = 60 * SECOND_MS;
/**
 * How far a check reaches either side of a candidate's stored time: a revision's move, and how far
 * the stored time may lie from the true one, at least a minute (`reportedPrecisionMs`: a gateway
 * reporting hours stored a whole hour, the event lying anywhere in the hour around it).
 */
export function reachMs(timeMs: number): number {
  return MOVE_MS + Math.max(MINUTE_MS, reportedPrecisionMs([timeMs]));
}
/** Candidates this close together share one check query. */
export const GROUP_SPAN_MS = 10 * 60 * SECOND_MS;

export interface Candidate {
  id: string;
  timeMs: number;
}

export interface DeletionCheck {
  /** The unfiltered query: whole seconds, `reachMs` beyond the candidates either side. */
  region: Region;
  ids: string[];
}

/**
 * The run's own answers prove absence: the stream is unfiltered and the event lies `reachMs` inside
 * the window region.
 */
export function provenByWindow(c: Candidate, window: Region, unfiltered: boolean): boolean {
  const reach = reachMs(c.timeMs);
  return unfiltered && c.timeMs - reach >= window.lo && c.timeMs + reach <= window.hi;
}

const checkRegion = (group: readonly Candidate[]): Region => ({
  lo: Math.floor(Math.min(...group.map((c) => c.timeMs - reachMs(c.timeMs))) / SECOND_MS) * SECOND_MS,
  hi: Math.ceil(Math.max(...group.map((c) => c.timeMs + reachMs(c.timeMs))) / SECOND_MS) * SECOND_MS,
});

/** Candidates in time order, grouped so that each check spans at most GROUP_SPAN_MS of them. */
export function planChecks(candidates: readonly Candidate[]): DeletionCheck[] {
  const sorted = [...candidates].sort((a, b) => a.timeMs - b.timeMs);
  const groups: Candidate[][] = [];
  for (const c of sorted) {
    const group = groups[groups.length - 1];
    if (group && c.timeMs - group[0]!.timeMs <= GROUP_SPAN_MS) group.push(c);
    else groups.push([c]);
  }
  return groups.map(groupCheck);
}

export interface CheckVerdict {
  /** Absent from an answer too small to be truncated: mark deleted. */
  absent: string[];
  /** In the answer (whole or not): the answer's version updates the stored one. */
  present: string[];
  /** Absent from an answer that may be truncated: ask again in smaller checks (none for a single event). */
  again: DeletionCheck[];
}

function groupCheck(group: readonly Candidate[]): DeletionCheck {
  return { region: checkRegion(group), ids: group.map((c) => c.id) };
}

/** What an unfiltered answer to `check` proves, given the largest answer the gateway is known to give. */
export function judgeCheck(
  check: DeletionCheck,
  candidates: readonly Candidate[],
  answerIds: ReadonlySet<string>,
  answerSize: number,
  capFloor: number,
): CheckVerdict {
  const present = check.ids.filter((id) => answerIds.has(id));
  const missing = check.ids.filter((id) => !answerIds.has(id));
  if (answerSize < capFloor) return { absent: missing, present, again: [] };
  const rest = candidates.filter((c) => missing.includes(c.id)).sort((a, b) => a.timeMs - b.timeMs);
  if (rest.length === 0) return { absent: [], present, again: [] };
  // A lone event whose check is still full stays unproven: nothing is marked without proof.
  if (rest.length === 1 && check.ids.length === 1) return { absent: [], present, again: [] };
  const half = Math.ceil(rest.length / 2);
  const parts = rest.length === 1 ? [rest] : [rest.slice(0, half), rest.slice(half)];
  return { absent: [], present, again: parts.map(groupCheck) };
}
