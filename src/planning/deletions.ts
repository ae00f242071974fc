/**
 * Deletions, proven. After a re-read proved a window complete, a stored event of the stream that
 * no answer of that run returned is a candidate: deleted upstream, or revised out of the stream's
 * filters, or moved in time. It is marked deleted only on proof that the catalog no longer holds
 * it anywhere near its time: an unfiltered answer, too small to be truncated, over its time give
 * or take a revision's move and the precision of stored times (`REACH_MS`). For an unfiltered
 * stream the window's own answers are that proof when the event lies well inside the window;
 * otherwise a targeted check asks. An answer that holds the event means it was revised (it is
 * updated, not marked). Pure: the caller makes the calls and writes.
 */
import { MINUTE_MS, SECOND_MS } from '../domain/time.js';
import type { Region } from './truncation/frontier.js';

/** How far a revision may move an event's time and still be found by a check around its old time. */
export const MOVE_MS = 60 * SECOND_MS;
/**
 * How far a stored time may lie from the true one: times reported to the minute are read
 * (`reportedPrecisionMs`), so a check reaches that far beyond a revision's move.
 */
const STORED_PRECISION_MS = MINUTE_MS;
/** How far a check reaches either side of a candidate's stored time. */
const REACH_MS = MOVE_MS + STORED_PRECISION_MS;
/** Candidates this close together share one check query. */
export const GROUP_SPAN_MS = 10 * 60 * SECOND_MS;

export interface Candidate {
  id: string;
  timeMs: number;
}

export interface DeletionCheck {
  /** The unfiltered query: whole seconds, REACH_MS beyond the candidates either side. */
  region: Region;
  ids: string[];
}

/**
 * The run's own answers prove absence: the stream is unfiltered and the event lies REACH_MS inside
 * the window region.
 */
export function provenByWindow(c: Candidate, window: Region, unfiltered: boolean): boolean {
  return unfiltered && c.timeMs - REACH_MS >= window.lo && c.timeMs + REACH_MS <= window.hi;
}

const checkRegion = (fromMs: number, toMs: number): Region => ({
  lo: Math.floor((fromMs - REACH_MS) / SECOND_MS) * SECOND_MS,
  hi: Math.ceil((toMs + REACH_MS) / SECOND_MS) * SECOND_MS,
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
  return { region: checkRegion(group[0]!.timeMs, group[group.length - 1]!.timeMs), ids: group.map((c) => c.id) };
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
