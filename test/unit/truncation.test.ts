import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  advance,
  afterRefutation,
  initialFrontier,
  nextQuery,
  type Answer,
  type MsInterval,
  type OrderVerdict,
  type SeenEvent,
  type TruncationOrder,
  UnresolvableTruncationError,
} from '../../src/planning/truncation.js';
import { createRng } from '../../src/emulator/rng.js';

const MAX = 200;
const DAY = 86_400_000;

/** A pure stand-in for a gateway: inclusive bounds, truncation by the given order. */
function answerFor(all: SeenEvent[], q: MsInterval, order: TruncationOrder, rng: () => number): Answer {
  const matched = all.filter((e) => e.timeMs >= q.startMs && e.timeMs <= q.endMs);
  if (matched.length <= MAX) return { events: matched, truncated: false };
  let kept: SeenEvent[];
  if (order === 'newest') kept = [...matched].sort((a, b) => b.timeMs - a.timeMs).slice(0, MAX);
  else if (order === 'oldest') kept = [...matched].sort((a, b) => a.timeMs - b.timeMs).slice(0, MAX);
  else {
    const copy = [...matched];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    kept = copy.slice(0, MAX);
  }
  return { events: kept, truncated: true };
}


function runWindow(all: SeenEvent[], window: MsInterval, order: TruncationOrder, known: OrderVerdict, seed = 1) {
  const rng = createRng(seed);
  let frontier = initialFrontier(window);
  let verdict = known;
  const got = new Set<string>();
  let calls = 0;
  for (let q = nextQuery(frontier); q; q = nextQuery(frontier)) {
    calls++;
    if (calls > 10_000) throw new Error('no progress');
    const answer = answerFor(all, q, order, rng);
    answer.events.forEach((e) => got.add(e.id));
    const step = advance(frontier, answer, verdict, MAX);
    frontier = step.frontier;
    if (step.verdict) verdict = step.verdict;
    if (step.refuted) verdict = afterRefutation(verdict, step.refuted);
  }
  return { got, calls, verdict };
}

function uniformEvents(n: number, window: MsInterval, seed: number): SeenEvent[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => ({
    id: `e${i}`,
    timeMs: window.startMs + Math.floor(rng() * (window.endMs - window.startMs)),
  }));
}

const WINDOW = { startMs: Date.UTC(2025, 4, 6), endMs: Date.UTC(2025, 4, 6) + 31 * DAY };

describe('truncation follow-up', () => {
  it('an untruncated first answer ends the window in one call', () => {
    const events = uniformEvents(150, WINDOW, 3);
    const r = runWindow(events, WINDOW, 'random' as never, 'unknown');
    expect(r.calls).toBe(1);
    expect(r.got.size).toBe(150);
  });

  it.each(['newest', 'oldest', 'mixed'] as const)('gets every event of a dense month, order %s', (order) => {
    const events = uniformEvents(9366, WINDOW, 7);
    const r = runWindow(events, WINDOW, order, 'unknown');
    expect(r.got.size).toBe(events.length);
    const pages = Math.ceil(events.length / MAX);
    if (order === 'newest') expect(r.calls).toBeLessThanOrEqual(1.2 * pages + 1);
    else expect(r.calls).toBeLessThanOrEqual(3 * pages + 1);
    // Newest-first is proven or refuted; oldest-first is tested only once newest-first is refuted.
    const learned = { newest: ['newest'], oldest: ['oldest', 'not-newest'], mixed: ['not-newest', 'mixed'] }[order];
    expect(learned).toContain(r.verdict);
  });

  it('keeps cost within target when the verdict is already known, many small windows', () => {
    let calls = 0;
    let total = 0;
    for (let w = 0; w < 40; w++) {
      const win = { startMs: WINDOW.startMs + w * 31 * DAY, endMs: WINDOW.startMs + (w + 1) * 31 * DAY };
      const events = uniformEvents(200 + w * 37, win, w);
      total += events.length;
      const r = runWindow(events, win, 'newest', 'newest', w);
      expect(r.got.size).toBe(events.length);
      calls += r.calls;
    }
    expect(calls).toBeLessThanOrEqual(1.2 * Math.ceil(total / MAX) + 40);
  });

  it('an answer lacking an event an earlier answer showed restarts the whole window', () => {
    const window = { startMs: 0, endMs: 10 * DAY };
    const first = Array.from({ length: MAX }, (_, i) => ({ id: `n${i}`, timeMs: 5 * DAY + i * 1000 }));
    const step1 = advance(initialFrontier(window), { events: first, truncated: true }, 'newest', MAX);
    expect(nextQuery(step1.frontier)).toEqual({ startMs: 0, endMs: 5 * DAY + 1000 });
    // The chain's next answer must hold n0 and n1 (both inside its interval): it holds neither.
    const older = Array.from({ length: 50 }, (_, i) => ({ id: `o${i}`, timeMs: i * 1000 }));
    const step2 = advance(step1.frontier, { events: older, truncated: false }, 'newest', MAX);
    expect(step2.contradiction).toMatch(/lacks 2 event/);
    expect(step2.verdict).toBe('unknown');
    expect(step2.frontier.tasks).toEqual([{ kind: 'fetch', interval: window, expect: [] }]);
  });

  it('boundaries widen outward to whole seconds strictly past the event', () => {
    const window = { startMs: 0, endMs: DAY };
    const events = Array.from({ length: MAX }, (_, i) => ({ id: `e${i}`, timeMs: 40_000_123 + i * 10 }));
    const step = advance(initialFrontier(window), { events, truncated: true }, 'newest', MAX);
    expect(nextQuery(step.frontier)).toEqual({ startMs: 0, endMs: 40_001_000 });
    const oldest = advance(initialFrontier(window), { events, truncated: true }, 'oldest', MAX);
    expect(nextQuery(oldest.frontier)).toEqual({ startMs: 40_002_000, endMs: DAY });
  });

  it('refuses, with a clear error, more than max_results events inside one second', () => {
    const window = { startMs: 0, endMs: 1000 };
    const events = Array.from({ length: MAX }, (_, i) => ({ id: `e${i}`, timeMs: 500 }));
    expect(() => advance(initialFrontier(window), { events, truncated: true }, 'newest', MAX)).toThrow(/cannot be split further/);
  });

  it('property: lossless for any event set and any order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 31 * DAY }), { minLength: 0, maxLength: 1500 }),
        fc.constantFrom<TruncationOrder>('newest', 'oldest', 'mixed'),
        fc.integer({ min: 1, max: 1000 }),
        (offsets, order, seed) => {
          const events = offsets.map((o, i) => ({ id: `e${i}`, timeMs: WINDOW.startMs + o }));
          const r = runWindow(events, WINDOW, order, 'unknown', seed);
          expect(r.got.size).toBe(events.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: clustered times (bursts, ties) are still lossless', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 31 * DAY }), fc.integer({ min: 1, max: 150 })), { minLength: 1, maxLength: 12 }),
        fc.constantFrom<TruncationOrder>('newest', 'oldest', 'mixed'),
        (bursts, order) => {
          let i = 0;
          const events = bursts.flatMap(([at, n]) =>
            Array.from({ length: n }, (_, k) => ({ id: `b${i++}`, timeMs: WINDOW.startMs + Math.min(31 * DAY, at + (k % 3) * 1000) })),
          );
          const perSecond = new Map<number, number>();
          for (const e of events) perSecond.set(Math.floor(e.timeMs / 1000), (perSecond.get(Math.floor(e.timeMs / 1000)) ?? 0) + 1);
          const splittable = Math.max(...perSecond.values()) <= MAX / 2;
          if (splittable) expect(runWindow(events, WINDOW, order, 'unknown').got.size).toBe(events.length);
          else {
            try {
              expect(runWindow(events, WINDOW, order, 'unknown').got.size).toBe(events.length);
            } catch (e) {
              expect(e).toBeInstanceOf(UnresolvableTruncationError);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('what refutations teach', () => {
  it.each([
    ['unknown', 'newest', 'not-newest'],
    ['not-newest', 'oldest', 'mixed'],
    ['newest', 'newest', 'not-newest'],
    ['oldest', 'oldest', 'unknown'],
    ['mixed', 'newest', 'mixed'],
  ] as const)('%s, then %s refuted -> %s', (current, refuted, next) => {
    expect(afterRefutation(current, refuted)).toBe(next);
  });

  it('an oldest-first gateway is learned in the second window and walked as a chain from then on', () => {
    const w1 = { startMs: 0, endMs: 31 * DAY };
    const w2 = { startMs: 31 * DAY, endMs: 62 * DAY };
    const first = runWindow(uniformEvents(3000, w1, 1), w1, 'oldest', 'unknown');
    expect(['oldest', 'not-newest']).toContain(first.verdict);
    const second = runWindow(uniformEvents(3000, w2, 2), w2, 'oldest', 'not-newest');
    expect(second.verdict).toBe('oldest');
    expect(second.calls).toBeLessThanOrEqual(Math.ceil(3000 / 199) + 2);
  });
});
