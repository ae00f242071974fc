/**
 * How the status page groups stream keys into cards and judges them. Pure: one card per stream of
 * jobs.yaml (an indicator stream reads every country x indicator, each its own stream key), its
 * state the worst of its parts, and an error shown as current only while something in the card
 * is failed or retrying and no later success overcame it.
 */
import type { DeclaredStream } from '../declared-streams.js';
import { PARTITION_STATE } from '../../domain/partition.js';
import type { ExecutionError } from './queries.js';
import type { StreamStatus } from '../../db/queries/status.js';

/**
 * A card's (or one part's) state, worst first. `retrying`: a partition that failed and is being
 * tried again; `idle`: nothing planned yet. A failure needs someone; a retry may still heal by
 * itself; a partial window lacks a few seconds for good; running and queued are work under way.
 */
export const CARD_STATE = {
  failed: PARTITION_STATE.failed,
  retrying: 'retrying',
  partial: PARTITION_STATE.partial,
  running: PARTITION_STATE.running,
  pending: PARTITION_STATE.pending,
  done: PARTITION_STATE.done,
  idle: 'idle',
} as const;
export type CardState = (typeof CARD_STATE)[keyof typeof CARD_STATE];

/** Worst first. */
export const CARD_STATE_ORDER: readonly CardState[] = [
  CARD_STATE.failed,
  CARD_STATE.retrying,
  CARD_STATE.partial,
  CARD_STATE.running,
  CARD_STATE.pending,
  CARD_STATE.done,
  CARD_STATE.idle,
];

export const CARD_STATE_LABEL: Record<CardState, string> = {
  [CARD_STATE.failed]: CARD_STATE.failed,
  [CARD_STATE.retrying]: 'retrying',
  [CARD_STATE.partial]: 'partial',
  [CARD_STATE.running]: 'in progress',
  [CARD_STATE.pending]: 'queued',
  [CARD_STATE.done]: 'ingested',
  [CARD_STATE.idle]: 'nothing planned',
};

export type PartitionCounts = StreamStatus['partitions'];

/** `retrying` of the pending and running partitions are being tried again after a failure. */
export function partState(p: PartitionCounts, retrying: number): CardState {
  if (p.failed > 0) return CARD_STATE.failed;
  if (retrying > 0) return CARD_STATE.retrying;
  if (p.partial > 0) return CARD_STATE.partial;
  if (p.running > 0) return CARD_STATE.running;
  if (p.pending > 0) return CARD_STATE.pending;
  if (p.done > 0) return CARD_STATE.done;
  return CARD_STATE.idle;
}

/** The worst of `states`; `idle` when there are none. */
export function worstState(states: Iterable<CardState>): CardState {
  let worst: CardState = CARD_STATE.idle;
  for (const s of states) if (CARD_STATE_ORDER.indexOf(s) < CARD_STATE_ORDER.indexOf(worst)) worst = s;
  return worst;
}

export function sumCounts(parts: Iterable<PartitionCounts>): PartitionCounts {
  const sum: PartitionCounts = { done: 0, pending: 0, running: 0, partial: 0, failed: 0 };
  for (const p of parts) {
    sum.done += p.done;
    sum.pending += p.pending;
    sum.running += p.running;
    sum.partial += p.partial;
    sum.failed += p.failed;
  }
  return sum;
}

/** A card's parts: the stream keys of one jobs.yaml stream, or keys no stream of the file reads. */
export type CardGroup =
  | { id: string; origin: 'jobs'; title: string; operation: string; streamKeys: string[]; stream: DeclaredStream }
  | { id: string; origin: 'ad-hoc'; title: string; operation: string; streamKeys: string[]; stream: null };

/** The indicator code of `indicator:<code>:<country>`. */
function indicatorOf(streamKey: string): string | null {
  const m = /^indicator:([^:]+):[^:]+$/.exec(streamKey);
  return m?.[1] ?? null;
}

/**
 * One card per stream of jobs.yaml, in file order; a key two streams share shows in both. Keys
 * no stream reads (ad-hoc backfills, streams since removed from the file) follow: one card per
 * earthquake stream key, one per indicator code with all its countries.
 */
export function groupCards(
  declared: readonly DeclaredStream[],
  known: ReadonlyArray<{ streamKey: string; operation: string }>,
): CardGroup[] {
  const jobs: CardGroup[] = declared.map((s) => ({
    id: `jobs:${s.name}`,
    origin: 'jobs',
    title: s.name,
    operation: s.operation,
    streamKeys: s.streamKeys,
    stream: s,
  }));
  const claimed = new Set(declared.flatMap((s) => s.streamKeys));
  const adHoc = new Map<string, CardGroup>();
  const sorted = [...known].sort((a, b) => a.streamKey.localeCompare(b.streamKey));
  for (const k of sorted) {
    if (claimed.has(k.streamKey)) continue;
    const indicator = k.operation === 'indicator' ? indicatorOf(k.streamKey) : null;
    const id = indicator === null ? `ad-hoc:${k.streamKey}` : `ad-hoc:indicator:${indicator}`;
    const group = adHoc.get(id);
    if (group) group.streamKeys.push(k.streamKey);
    else
      adHoc.set(id, {
        id,
        origin: 'ad-hoc',
        title: indicator ?? k.streamKey,
        operation: k.operation,
        streamKeys: [k.streamKey],
        stream: null,
      });
  }
  return [...jobs, ...adHoc.values()];
}

export type CardError = Omit<ExecutionError, 'overcameAt'> &
  ({ currency: 'current' } | { currency: 'resolved'; overcameAt: Date });

/** The newest of the parts' last errors. */
export function newestError(errors: Iterable<ExecutionError | null>): ExecutionError | null {
  let newest: ExecutionError | null = null;
  for (const e of errors) if (e !== null && (newest === null || e.at > newest.at)) newest = e;
  return newest;
}

/**
 * Whether a card's newest error is still a problem. Overcome by a later success: resolved, with
 * when. Not overcome: current while something in the card is failed or retrying; otherwise (its
 * partition read again from scratch since, say) it is no longer anyone's problem and is not shown.
 */
export function cardError(last: ExecutionError | null, failing: boolean): CardError | null {
  if (last === null) return null;
  const { overcameAt, ...rest } = last;
  if (overcameAt !== null) return { ...rest, currency: 'resolved', overcameAt };
  return failing ? { ...rest, currency: 'current' } : null;
}

export function isFailing(state: CardState): boolean {
  return state === CARD_STATE.failed || state === CARD_STATE.retrying;
}

/** The error is that of a partition listed as failed or retrying (or reads the same): no need to list it twice. */
export function listedElsewhere(
  e: Pick<ExecutionError, 'streamKey' | 'partitionKey' | 'error'>,
  partitions: ReadonlyArray<{ streamKey: string; partitionKey: string; error: string | null }>,
): boolean {
  return partitions.some(
    (x) =>
      (x.streamKey === e.streamKey && x.partitionKey === e.partitionKey) || (x.error !== null && x.error === e.error),
  );
}
