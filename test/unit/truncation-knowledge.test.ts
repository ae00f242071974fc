/**
 * What a window read knows before its first call (knowledge.ts) and the cap rules (cap.ts): each
 * rule on its own, and a frontier saved by version 0.3.0 taken up by this one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, SECOND_MS, secondAfter } from '../../src/domain/time.js';
import {
  advance,
  afterProbe,
  answerAsProbe,
  callCeiling,
  initialFrontier,
  inQuestion,
  isFull,
  learnedShareOf,
  learnShared,
  measuredByOverflow,
  measuredByRepeat,
  MIN_LEARNED_RECOUNT,
  nextProbeRegion,
  nextQuery,
  probeRegionsOf,
  quietSide,
  resumeRead,
  savedFrontierSchema,
  sizingCap,
  windowKnowledge,
  windowRegion,
  type Cap,
  type KnowledgeInputs,
  type Region,
} from '../../src/planning/truncation/index.js';
import { frontierV2 } from '../support/adversary.js';

const T0 = Date.UTC(2025, 4, 1);
const window = { startMs: T0, endMs: T0 + 31 * DAY_MS - 2 * SECOND_MS };
const region = windowRegion(window);
const cap = (over: Partial<Cap> = {}): Cap => ({
  floor: 1,
  measured: null,
  hint: null,
  probes: [],
  probeRegions: [region, { lo: region.hi, hi: region.hi + 30 * DAY_MS }],
  seenAtMs: 0,
  unfiltered: false,
  ...over,
});
const inputs = (over: Partial<KnowledgeInputs> = {}): KnowledgeInputs => ({
  window,
  nowMs: T0 + 400 * DAY_MS,
  read: { kind: 'first' },
  facts: {
    capFloor: 1,
    measured: null,
    measuredBefore: null,
    capRegion: null,
    prefer: 'newest',
    hintBacked: false,
    recounted: null,
  },
  explore: false,
  circleCuts: true,
  unfiltered: true,
  proofs: [],
  storedProofs: [],
  storedTimes: [],
  nearby: null,
  ...over,
});

/** Events at `times`, and a gateway keeping any `trueCap` of what a query matched (a rotation chosen by `seed`). */
function rotatingGateway(times: readonly number[], trueCap: number, seed: number) {
  const catalog = times.map((t, i) => ({ id: `e${i}`, timeMs: t }));
  const keep = (q: { lo: number; hi: number }) => {
    const m = catalog.filter((e) => e.timeMs >= q.lo && e.timeMs <= q.hi);
    const k = seed % Math.max(1, m.length);
    return [...m.slice(k), ...m.slice(0, k)].slice(0, trueCap);
  };
  return { catalog, keep };
}

describe('the cap', () => {
  it('a lapsed floor sizes nothing: chunks are sized for max_results until a probe measures less', () => {
    expect(sizingCap(cap())).toBe(200);
    expect(sizingCap(cap({ floor: 150 }))).toBe(200);
    expect(sizingCap(cap({ floor: 100, measured: 100 }))).toBe(100);
    // Every probe asked without telling: the read's own floor is the best guess, never below a few events.
    expect(sizingCap(cap({ floor: 88, probes: [88, 0] }))).toBe(88);
    expect(sizingCap(cap({ floor: 3, probes: [3, 0] }))).toBe(200);
  });

  it('an answer at the floor below max_results is in question until the cap is known', () => {
    expect(isFull(0, 1)).toBe(false);
    expect(inQuestion(cap(), 150)).toBe(true);
    expect(inQuestion(cap({ floor: 200 }), 150)).toBe(false);
    expect(inQuestion(cap({ floor: 100, measured: 100 }), 100)).toBe(false);
    expect(inQuestion(cap({ probes: [5, 0] }), 150)).toBe(false);
  });

  it('a probe no larger than the answer says nothing alone; two of one size measure the cap', () => {
    let c = afterProbe(cap({ floor: 100 }), 100);
    expect(c.measured).toBeNull();
    c = afterProbe({ ...c, probeRegions: [...c.probeRegions, region] }, 100);
    expect(c.measured).toBe(100);
    expect(afterProbe(cap(), 200).measured).toBe(200);
    // The cap measured before the TTL lapsed counts as the first of the two.
    expect(afterProbe(cap({ floor: 100, hint: 100 }), 100).measured).toBe(100);
    expect(sizingCap(cap({ hint: 100 }))).toBe(100);
    expect(afterProbe(cap({ probes: [0] }), 0).measured).toBeNull();
  });

  it('two probes of one size over one stretch measure nothing: the same events may fill both', () => {
    const nested = cap({ floor: 25, probeRegions: [{ lo: T0, hi: T0 + DAY_MS }, region] });
    const c = afterProbe(afterProbe(nested, 25), 25);
    expect(c.measured).toBeNull();
  });

  it('a probe place inside another is dropped: it could only repeat that answer', () => {
    const day = { startMs: T0 + 10 * DAY_MS, endMs: T0 + 11 * DAY_MS };
    const regions = probeRegionsOf(day, { lo: day.startMs, hi: day.endMs }, T0 + 400 * DAY_MS);
    expect(regions).not.toContainEqual({ lo: day.startMs, hi: day.endMs });
    expect(regions).toHaveLength(3);
    const far = { lo: T0 + 200 * DAY_MS, hi: T0 + 230 * DAY_MS };
    expect(probeRegionsOf(day, far, T0 + 400 * DAY_MS)[0]).toEqual(far);
  });

  it('a window ending near now is never probed past now: what is left of the month after, or the month before', () => {
    const now = T0 + 100 * DAY_MS + 123;
    for (const [ago, third] of [
      [0, 'before'],
      [SECOND_MS, 'before'],
      [3_600_000, 'before'],
      [2 * DAY_MS, 'after'],
      [30 * DAY_MS, 'after'],
    ] as const) {
      const w = { startMs: now - ago - 7 * DAY_MS, endMs: now - ago };
      const regions = probeRegionsOf(w, null, now);
      expect(
        regions.every((r) => r.hi <= secondAfter(now)),
        `${ago}`,
      ).toBe(true);
      expect(regions, `${ago}`).toHaveLength(2);
      const [own, other] = regions as [Region, Region];
      // Apart (they share at most their end second), so two probes of one size there measure the cap.
      if (third === 'before') expect(other.hi - own.lo).toBe(SECOND_MS);
      else expect(other).toEqual({ lo: own.hi - SECOND_MS, hi: secondAfter(now) });
      const c = afterProbe(afterProbe(cap({ floor: 100, probeRegions: regions }), 100), 100);
      expect(c.measured, `${ago}`).toBe(100);
    }
    // A window a month or more before now keeps the whole month after it, and the month ending now.
    const old = { startMs: T0, endMs: T0 + 7 * DAY_MS };
    const later = probeRegionsOf(old, null, T0 + 100 * DAY_MS);
    expect(later).toHaveLength(3);
    expect(later[1]!.lo).toBe(secondAfter(old.endMs) - SECOND_MS);
    // A clock before the window's end is none (simulations pass 0): the month after is kept whole.
    expect(probeRegionsOf(old, null, 0)[1]).toEqual(later[1]);
  });

  it("an unfiltered stream's answer takes the turn of a probe place inside its query: that probe could only repeat it", () => {
    const month = { lo: region.lo + SECOND_MS, hi: region.hi };
    const after = { lo: region.hi - SECOND_MS, hi: region.hi + 30 * DAY_MS };
    const c = cap({ floor: 100, unfiltered: true, probeRegions: [month, after] });
    const taken = answerAsProbe(c, 100, region);
    expect(taken.probes).toEqual([100]);
    expect(taken.probeRegions).toEqual([region, after]);
    expect(nextProbeRegion(taken)).toEqual(after);
    expect(inQuestion(taken, 100)).toBe(true);
    // A probe of the month after giving as many measures the cap: two unfiltered answers apart.
    expect(afterProbe(taken, 100).measured).toBe(100);
    // A filtered stream's answer says nothing of what an unfiltered probe finds; a place not inside is asked.
    expect(answerAsProbe({ ...c, unfiltered: false }, 100, region)).toEqual({ ...c, unfiltered: false });
    expect(answerAsProbe(c, 100, { lo: region.lo, hi: region.lo + DAY_MS })).toEqual(c);
  });

  it('a whole-window answer of an unfiltered stream at a silent cap is probed on the side its events leave quiet', () => {
    const f = initialFrontier(window, windowKnowledge(inputs()), 1);
    const answer = { events: Array.from({ length: 100 }, (_, i) => ({ id: `e${i}`, timeMs: T0 + i * 60_000 })) };
    const held = advance(f, answer);
    expect(held.held).toBe(true);
    expect(held.frontier.cap.probes).toEqual([100]);
    const probe = held.frontier.tasks[0]!;
    if (probe.kind !== 'probe') throw new Error('expected the probe first');
    // Above the answer's last event, a second inside the window's query at each end.
    expect(probe.region).toEqual({ lo: T0 + 99 * 60_000 + SECOND_MS, hi: region.hi - SECOND_MS });
    // One event there the answer lacks: the query matched more than 100, so the cap is 100.
    const more = advance(held.frontier, { events: [{ id: 'x', timeMs: T0 + 10 * DAY_MS }] }, 'probe');
    expect(more.learned.measured).toBe(100);
    expect(more.held).toBe(false);
    expect(more.frontier.tasks.some((t) => t.kind === 'probe')).toBe(false);
    expect(more.frontier.eventsProven).toBe(0);
    // Nothing there, or only what the answer held: nothing measured, the month after is asked next.
    for (const events of [[], answer.events.slice(0, 3)]) {
      const none = advance(held.frontier, { events }, 'probe');
      expect(none.frontier.cap.measured).toBeNull();
      const next = none.frontier.tasks[0]!;
      if (next.kind !== 'probe') throw new Error('expected another probe');
      expect(next.region.lo).toBeGreaterThanOrEqual(region.hi - SECOND_MS);
    }
    const filtered = advance(initialFrontier(window, windowKnowledge(inputs({ unfiltered: false })), 1), answer);
    expect(filtered.frontier.cap.probes).toEqual([]);
  });

  it('an answer that looks complete is probed where a larger answer was seen before its quiet side', () => {
    const far = { lo: T0 - 60 * DAY_MS, hi: T0 - 30 * DAY_MS };
    const after = { lo: region.hi - SECOND_MS, hi: region.hi + 30 * DAY_MS };
    const c = cap({ unfiltered: true, floor: 90, probeRegions: [far, after] });
    const newest = Array.from({ length: 90 }, (_, i) => region.hi - 1 - i * 60_000);
    const quiet = quietSide(region, newest);
    // Nothing known of the cap: the quiet side first, where a capped answer's unseen events lie.
    expect(nextProbeRegion(answerAsProbe(c, 90, region, newest))).toEqual(quiet);
    // Below the cap last measured: where that cap was seen first, the quiet side next.
    expect(answerAsProbe({ ...c, hint: 100 }, 90, region, newest).probeRegions).toEqual([far, quiet, after]);
    // As large as that cap, or larger: probably capped, and a probe of its quiet side also shows where the rest lies.
    for (const hint of [90, 80])
      expect(nextProbeRegion(answerAsProbe({ ...c, hint }, 90, region, newest))).toEqual(quiet);
    // Holding what stored events led the read to expect there.
    expect(answerAsProbe(c, 90, region, newest, true).probeRegions).toEqual([far, quiet, after]);
  });

  it("a re-read's answer holding every stored event of its chunk is probed where the largest answer was seen", () => {
    const far = { lo: T0 - 60 * DAY_MS, hi: T0 - 30 * DAY_MS };
    // The data ends a day into the window: its answer leaves the rest of the window quiet.
    const times = Array.from({ length: 150 }, (_, i) => T0 + i * 600_000);
    const facts = { ...inputs().facts, capRegion: far };
    const proofs = [{ lo: window.startMs, hi: window.endMs }];
    const known = { read: { kind: 'refresh' as const }, facts, proofs, storedProofs: proofs };
    const f = initialFrontier(window, windowKnowledge(inputs({ ...known, storedTimes: times })), 1);
    const events = times.map((t, i) => ({ id: `e${i}`, timeMs: t }));
    const held = advance(f, { events });
    expect(held.held).toBe(true);
    expect(held.frontier.tasks[0]).toEqual({ kind: 'probe', region: far });
    // Fewer events than were stored there: it may be capped, and its quiet side is asked first.
    const fewer = advance(f, { events: events.slice(0, 120) });
    expect(fewer.frontier.tasks[0]).toMatchObject({ kind: 'probe' });
    expect(fewer.frontier.tasks[0]).not.toEqual({ kind: 'probe', region: far });
  });

  it('an answer spread over its query, or too small to size by, leaves no quiet side to probe', () => {
    const spread = Array.from({ length: 100 }, (_, i) => region.lo + 1 + i * 7 * 3_600_000);
    expect(quietSide(region, spread)).toBeNull();
    expect(quietSide(region, [T0, T0 + SECOND_MS])).toBeNull();
    const newest = Array.from({ length: 100 }, (_, i) => region.hi - 1 - i * 60_000);
    expect(quietSide(region, newest)).toEqual({ lo: region.lo + SECOND_MS, hi: Math.min(...newest) - SECOND_MS });
  });

  it('a probe measures the cap only when its query held more than the answer, whatever the gateway kept', () => {
    const inQ = fc.integer({ min: region.lo, max: region.hi });
    fc.assert(
      fc.property(
        fc.uniqueArray(inQ, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 40 }),
        fc.tuple(inQ, inQ),
        fc.integer({ min: 0, max: 1000 }),
        (times, trueCap, [a, b], seed) => {
          const { catalog, keep } = rotatingGateway(times, trueCap, seed);
          const answer = keep(region);
          const asked = { lo: Math.min(a, b), hi: Math.max(a, b) };
          const held = { query: region, size: answer.length, ids: new Set(answer.map((e) => e.id)) };
          const c = cap({ floor: answer.length, unfiltered: true });
          const measured = measuredByOverflow(c, held, asked, keep(asked)).measured;
          if (measured !== null) {
            expect(catalog.length).toBeGreaterThan(answer.length);
            expect(measured).toBe(trueCap);
          }
        },
      ),
    );
  });

  it("a chunk asked again measures the cap when it holds an event, inside the full answer's span, that answer lacked", () => {
    const inQ = fc.integer({ min: region.lo, max: region.hi });
    fc.assert(
      fc.property(
        fc.uniqueArray(inQ, { minLength: 10, maxLength: 80 }),
        fc.integer({ min: 10, max: 60 }),
        fc.tuple(inQ, inQ),
        fc.integer({ min: 0, max: 1000 }),
        (times, trueCap, [a, b], seed) => {
          const { catalog, keep } = rotatingGateway(times, trueCap, seed);
          const full = keep(region);
          const again = keep({ lo: Math.min(a, b), hi: Math.max(a, b) });
          const c = cap({ floor: full.length });
          const sample = { ids: full.map((e) => e.id), points: full.map((e) => e.timeMs) };
          const measured = measuredByRepeat(c, sample, again).measured;
          if (measured !== null) {
            expect(catalog.length).toBeGreaterThan(full.length);
            expect(measured).toBe(trueCap);
          }
          // An answer below the floor, or a cap already known, measures nothing.
          expect(measuredByRepeat(cap({ floor: full.length + 1 }), sample, again).measured).toBeNull();
          expect(measuredByRepeat(cap({ floor: full.length, measured: 7 }), sample, again).measured).toBe(7);
        },
      ),
    );
    // An event the full answer lacked at its span's edge (within a second) may lie outside its query.
    const full = Array.from({ length: 20 }, (_, i) => ({ id: `f${i}`, timeMs: T0 + (i + 1) * 60_000 }));
    const sample = { ids: full.map((e) => e.id), points: full.map((e) => e.timeMs) };
    const edge = [{ id: 'x', timeMs: T0 + 60_000 + 500 }];
    expect(measuredByRepeat(cap({ floor: 20 }), sample, edge).measured).toBeNull();
    expect(measuredByRepeat(cap({ floor: 20 }), sample, [{ id: 'x', timeMs: T0 + 90_000 }]).measured).toBe(20);
  });

  it('a held answer waits for the probe, and the probe makes it a proof', () => {
    const f = initialFrontier(window, windowKnowledge(inputs()), 1);
    const answer = { events: Array.from({ length: 150 }, (_, i) => ({ id: `e${i}`, timeMs: T0 + i * 60_000 })) };
    const held = advance(f, answer);
    expect(held.held).toBe(true);
    expect(held.frontier.tasks[0]!.kind).toBe('probe');
    const probe = Array.from({ length: 200 }, (_, i) => ({ id: `p${i}`, timeMs: T0 + i * 1000 }));
    const settled = advance(held.frontier, { events: probe }, 'probe');
    expect(settled.learned.measured).toBe(200);
    expect(settled.finished).toBe(true);
    expect(settled.frontier.eventsProven).toBe(150);
  });
});

describe('a cap measured by another read within the TTL', () => {
  // The floor other reads shared may have lapsed while the measure has not: an answer between the
  // two is below the measured cap, so a proof, not a full answer to ask again.
  it('raises the floor of a read starting now to the measured cap', () => {
    const facts = { ...inputs().facts, capFloor: 1, measured: 200 };
    const f = initialFrontier(window, windowKnowledge(inputs({ facts })), 1);
    expect(f.cap.floor).toBe(200);
    const answer = { events: Array.from({ length: 186 }, (_, i) => ({ id: `e${i}`, timeMs: T0 + i * 60_000 })) };
    const step = advance(f, answer);
    expect(step.full).toBe(false);
    expect(step.finished).toBe(true);
  });

  it('raises the floor of a read in progress, settling an answer held at its own floor', () => {
    const f = initialFrontier(window, windowKnowledge(inputs()), 1);
    const answer = { events: Array.from({ length: 186 }, (_, i) => ({ id: `e${i}`, timeMs: T0 + i * 60_000 })) };
    const held = advance(f, answer);
    expect(held.held).toBe(true);
    const settled = learnShared(held.frontier, { floor: 186, measured: 200 });
    expect(settled.cap.floor).toBe(200);
    expect(settled.tasks).toEqual([]);
    expect(settled.eventsProven).toBe(186);
  });
});

describe('the knowledge a read starts from', () => {
  it('a first read skips what other reads proved, whatever their windows', () => {
    const proofs = [{ lo: T0 - 5 * DAY_MS, hi: T0 + 10 * DAY_MS }];
    const k = windowKnowledge(inputs({ proofs, storedProofs: proofs }));
    expect(k.scope).toHaveLength(1);
    expect(k.scope[0]!.lo).toBe(T0 + 10 * DAY_MS - SECOND_MS);
    expect(k.scope[0]!.hi).toBe(region.hi);
  });

  it('a refresh cuts its window where proven parts end; a sliver of proof joins its neighbour', () => {
    const storedProofs = [
      { lo: T0 - 5 * DAY_MS, hi: T0 + 10 * DAY_MS },
      { lo: T0 + 20 * DAY_MS, hi: T0 + 20 * DAY_MS + 60_000 },
    ];
    const storedTimes = Array.from({ length: 500 }, (_, i) => T0 + i * 1_700_000);
    const k = windowKnowledge(inputs({ read: { kind: 'refresh' }, storedProofs, storedTimes }));
    expect(k.pieces).toHaveLength(2);
    expect(k.pieces[0]!.stored?.points.every((t) => t <= T0 + 10 * DAY_MS)).toBe(true);
    expect(k.pieces[1]!.stored).toBeNull();
  });

  it('a proof touching the window at one instant adds no piece', () => {
    const storedProofs = [{ lo: T0 - 31 * DAY_MS, hi: T0 }];
    expect(windowKnowledge(inputs({ storedProofs })).pieces).toHaveLength(1);
  });

  it('probes ask where the largest answer was seen, then the month around the window, and now', () => {
    const capRegion = { lo: T0 - 100 * DAY_MS, hi: T0 - 70 * DAY_MS };
    const k = windowKnowledge(inputs({ facts: { ...inputs().facts, capRegion } }));
    expect(k.cap.probeRegions[0]).toEqual(capRegion);
    expect(k.cap.probeRegions).toHaveLength(4);
    for (const r of k.cap.probeRegions) expect(r.hi - r.lo).toBeLessThanOrEqual(31 * DAY_MS);
  });
});

describe('the share of new events earlier re-reads counted', () => {
  const facts = (recounted: { stored: number; added: number } | null) => ({ ...inputs().facts, recounted });

  it('is the prior of a read only once they counted enough, kept within 0 and 1', () => {
    expect(learnedShareOf(null)).toBeNull();
    expect(learnedShareOf({ stored: MIN_LEARNED_RECOUNT - 1, added: 50 })).toBeNull();
    expect(learnedShareOf({ stored: 2_000, added: 120 })).toBeCloseTo(0.06);
    // More deleted than added: the catalog shrank, and nothing new is expected.
    expect(learnedShareOf({ stored: 2_000, added: -40 })).toBe(0);
    expect(learnedShareOf({ stored: 2_000, added: 5_000 })).toBe(1);
  });

  it("sizes a re-read's first chunks, and stays with the read while it is saved and taken up", () => {
    const storedProofs = [{ lo: T0 - DAY_MS, hi: T0 + 32 * DAY_MS }];
    const storedTimes = Array.from({ length: 5_000 }, (_, i) => T0 + i * 500_000);
    const refresh = (recounted: { stored: number; added: number } | null) =>
      windowKnowledge(inputs({ read: { kind: 'refresh' }, storedProofs, storedTimes, facts: facts(recounted) }));
    const none = initialFrontier(window, refresh(null), 1);
    const learned = initialFrontier(window, refresh({ stored: 10_000, added: 1_000 }), 1);
    expect(none.learnedShare).toBeNull();
    expect(learned.learnedShare).toBeCloseTo(0.1);
    const firstChunk = (f: typeof none) => nextQuery(f)!.region;
    // 10% new expected: the first chunk holds fewer stored events than with the built-in 3%.
    expect(firstChunk(learned).hi - firstChunk(learned).lo).toBeLessThan(firstChunk(none).hi - firstChunk(none).lo);
    const saved = savedFrontierSchema.parse(JSON.parse(JSON.stringify(learned)));
    expect(saved.learnedShare).toBeCloseTo(0.1);
    // Taken up, a read keeps the share it began with; one saved before any was learned takes it up.
    const later = refresh({ stored: 10_000, added: 0 });
    expect(resumeRead(saved, later, 0, Infinity).learnedShare).toBeCloseTo(0.1);
    expect(resumeRead(none, refresh({ stored: 10_000, added: 500 }), 0, Infinity).learnedShare).toBeCloseTo(0.05);
  });

  it('a frontier saved before the share was kept is taken up as none learned', () => {
    const { learnedShare, ...saved } = initialFrontier(window, windowKnowledge(inputs()), 1);
    expect(learnedShare).toBeNull();
    expect(savedFrontierSchema.parse(JSON.parse(JSON.stringify(saved))).learnedShare).toBeNull();
  });
});

describe('a read taken up again', () => {
  it('gets a call ceiling of its own, its cap relearned after the TTL', () => {
    const k = windowKnowledge(inputs({ facts: { ...inputs().facts, capFloor: 200 } }));
    const f = { ...initialFrontier(window, k, 1), calls: 500 };
    expect(500).toBeGreaterThan(callCeiling(0, 200, window));
    const resumed = resumeRead(f, windowKnowledge(inputs()), f.cap.seenAtMs + 7_200_000, 3_600_000);
    expect(resumed.callsBeforeRun).toBe(500);
    expect(resumed.cap.floor).toBe(1);
    const step = advance(resumed, { events: [] });
    expect(step.failure).toBeNull();
  });

  it('a frontier version 0.3.0 saved is converted, its walks and counts kept', () => {
    const v2 = frontierV2(window, {
      capFloor: 37,
      prefer: 'walk',
      refuted: { newest: 1, oldest: 0 },
      confirmed: { newest: 0, oldest: 2 },
      tasks: [
        {
          kind: 'walk',
          dir: 'up',
          region,
          reach: region.lo + DAY_MS,
          guessed: true,
          rate: null,
          sample: null,
          misses: 1,
        },
      ],
      startedAtMs: 5,
      calls: 9,
      eventsSeen: 120,
      provenMs: 1000,
    });
    const f = savedFrontierSchema.parse(v2);
    expect(f.version).toBe(3);
    expect(f.prefer).toBe('none');
    expect(f.eventsProven).toBe(120);
    expect(f.tasks[0]).toMatchObject({ kind: 'walk', from: 'oldest', fullAnswers: 1, held: null });
    expect(f.cap).toMatchObject({ floor: 37, measured: null, seenAtMs: 0 });
    expect(f.recount).toEqual({ stored: 0, added: 0 });
    expect(savedFrontierSchema.safeParse({ window, tasks: [] }).success).toBe(false);
  });

  it('takes up a frontier of the current shape saved before recounts were kept, as nothing counted again', () => {
    const { recount, ...saved } = initialFrontier(window, windowKnowledge(inputs()), 1);
    expect(recount).toEqual({ stored: 0, added: 0 });
    const f = savedFrontierSchema.parse(JSON.parse(JSON.stringify(saved)));
    expect(f.recount).toEqual({ stored: 0, added: 0 });
    expect(f.tasks).toEqual(saved.tasks);
  });
});
