/**
 * The maintained roll-ups equal a recount of what they summarise after every kind of write, in
 * random sequences on one database: answers (first reads, revisions of every counted field, a
 * deleted event coming back), deletions, streams created over stored events, rows removed by hand,
 * audit rows begun, completed and rolled up past retention, and two answers writing the same days
 * at once. Events are the bundled real month's.
 */
import { join } from 'node:path';
import { inArray, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataFolder, loadUsgsFile } from '@gateway-ingest/emulator';
import { eventRows, markDeleted, upsertEvents } from '../../src/db/earthquake-events.js';
import { countEvents } from '../../src/db/queries/plan.js';
import { storedOfStream } from '../../src/db/queries/stream-density.js';
import { rollUpBatch } from '../../src/db/retention.js';
import { earthquakeEvents } from '../../src/db/schema.js';
import { upsertStream } from '../../src/db/streams.js';
import { earthquakeStream } from '../../src/domain/streams.js';
import type { EarthquakeFilters } from '../../src/domain/filters.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { createTestDatabase, type TestDatabase } from '../support/isolation.js';
import { rollupDrift } from '../support/rollups.js';

const HOUR_MS = 3_600_000;
const RUNS = Number(process.env.ROLLUP_RUNS ?? 25);

let db: TestDatabase;
/** Four days of the real month: enough events to cross day boundaries, few enough to recount fast. */
let pool: EarthquakeEvent[] = [];
let seen = Date.parse('2025-06-10T00:00:00Z');
const nextSeen = () => new Date((seen += 1_000));

beforeAll(async () => {
  db = await createTestDatabase();
  const month = await loadUsgsFile(join(dataFolder, 'usgs', 'all_month_2025-05-06_2025-06-05.csv'));
  const lo = Date.parse('2025-05-20T00:00:00Z');
  pool = month.filter((e) => Date.parse(e.time) >= lo && Date.parse(e.time) < lo + 4 * 24 * HOUR_MS).slice(0, 600);
}, 120_000);
afterAll(async () => db?.drop());

type Model = Record<string, never>;
type Real = TestDatabase;

/** Picks events of the pool by a seed: about `share` of them, deterministic for the seed. */
function pick(seed: number, share: number): EarthquakeEvent[] {
  return pool.filter((_, i) => ((i * 2_654_435_761 + seed * 40_503) >>> 0) % 1000 < share * 1000);
}

/** An event as a later answer revises it: magnitude, time (across a day boundary), place, tsunami flag. */
function revise(e: EarthquakeEvent, how: number): EarthquakeEvent {
  switch (how % 5) {
    case 0:
      return { ...e, magnitude: e.magnitude === null ? 7.1 : e.magnitude + 1.5 };
    case 1:
      return { ...e, time: new Date(Date.parse(e.time) + 13 * HOUR_MS).toISOString() };
    case 2:
      return { ...e, place: `${e.place ?? ''} (revised)`, tsunami_flag: !e.tsunami_flag };
    case 3:
      return { ...e, magnitude: null };
    default:
      return e;
  }
}

async function answer(real: Real, seed: number, share: number, revised: number): Promise<void> {
  const events = pick(seed, share).map((e, i) => (i % 7 < revised ? revise(e, seed + i) : e));
  const at = nextSeen();
  await upsertEvents(real.db, eventRows(events, at, seed), seed);
}

class Answer implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly seed: number,
    readonly share: number,
    readonly revised: number,
  ) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    await answer(real, this.seed, this.share, this.revised);
  }
  toString = () => `answer(${this.seed}, ${this.share}, revised ${this.revised}/7)`;
}

class TwoAnswersAtOnce implements fc.AsyncCommand<Model, Real> {
  constructor(readonly seeds: [number, number]) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    await Promise.all([answer(real, this.seeds[0], 0.6, 2), answer(real, this.seeds[1], 0.6, 3)]);
  }
  toString = () => `twoAnswersAtOnce(${this.seeds.join(', ')})`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(readonly seed: number) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    const ids = pick(this.seed, 0.3).map((e) => e.id);
    const at = nextSeen();
    await real.db.transaction((tx) => markDeleted(tx, ids, this.seed, at, new Date(at.getTime() + 1)));
  }
  toString = () => `delete(${this.seed})`;
}

class RemoveByHand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly seed: number) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    const ids = pick(this.seed, 0.1).map((e) => e.id);
    if (ids.length > 0) await real.db.delete(earthquakeEvents).where(inArray(earthquakeEvents.id, ids));
  }
  toString = () => `removeByHand(${this.seed})`;
}

const FILTERS: EarthquakeFilters[] = [
  { minMagnitude: null, circle: null },
  { minMagnitude: 2.5, circle: null },
  { minMagnitude: 1, circle: { latitude: 36, longitude: -118, radiusKm: 800 } },
  { minMagnitude: null, circle: { latitude: 61, longitude: -150, radiusKm: 1500 } },
];

class NewStream implements fc.AsyncCommand<Model, Real> {
  constructor(readonly which: number) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    await upsertStream(real.db, earthquakeStream(FILTERS[this.which]!));
  }
  toString = () => `newStream(${JSON.stringify(FILTERS[this.which])})`;
}

const KINDS = [null, null, 'timeout', 'http_5xx'] as const;

class Calls implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly n: number,
    readonly daysAgo: number,
  ) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    for (let i = 0; i < this.n; i++) {
      const started = new Date(Date.now() - this.daysAgo * 24 * HOUR_MS - i * 60_000);
      const begun = await real.db.execute<{ id: number }>(sql`
        insert into gateway_executions (operation, stream_key, partition_key, request, started_at)
        values ('earthquake', ${i % 3 === 0 ? null : 'earthquake:all'}, 'p', '{}', ${started.toISOString()})
        returning id`);
      if (i % 4 === 3) continue; // never answered: billed stays unknown
      const kind = KINDS[i % KINDS.length]!;
      await real.db.execute(sql`
        update gateway_executions set finished_at = started_at, billed = ${kind === null}, units = ${kind ? null : i},
          error_kind = ${kind}, outcome = ${kind ? 'failed' : 'succeeded'}
        where id = ${begun.rows[0]!.id}`);
    }
  }
  toString = () => `calls(${this.n}, ${this.daysAgo} days ago)`;
}

class Retention implements fc.AsyncCommand<Model, Real> {
  constructor(readonly days: number) {}
  check = () => true;
  async run(_m: Model, real: Real) {
    const cutoff = new Date(Date.now() - this.days * 24 * HOUR_MS);
    while ((await rollUpBatch(real.db, cutoff, 5)).rows > 0);
  }
  toString = () => `retention(${this.days} days)`;
}

const seed = fc.integer({ min: 1, max: 1_000_000 });
const commands = fc.commands(
  [
    fc
      .tuple(seed, fc.constantFrom(0.2, 0.5, 1), fc.integer({ min: 0, max: 7 }))
      .map(([s, sh, r]) => new Answer(s, sh, r)),
    fc.tuple(seed, seed).map((s) => new TwoAnswersAtOnce(s)),
    seed.map((s) => new Delete(s)),
    seed.map((s) => new RemoveByHand(s)),
    fc.integer({ min: 0, max: FILTERS.length - 1 }).map((i) => new NewStream(i)),
    fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 5 })).map(([n, d]) => new Calls(n, d)),
    fc.integer({ min: 1, max: 4 }).map((d) => new Retention(d)),
  ],
  { maxCommands: 10 },
);

/** Intervals over the pool's days with edges inside days, on midnights, and within one day. */
const INTERVALS = [
  { startMs: Date.parse('2025-05-19T13:00:00Z'), endMs: Date.parse('2025-05-25T02:30:00Z') },
  { startMs: Date.parse('2025-05-20T00:00:00Z'), endMs: Date.parse('2025-05-23T00:00:00Z') },
  { startMs: Date.parse('2025-05-21T05:00:00.250Z'), endMs: Date.parse('2025-05-21T19:00:00Z') },
  { startMs: Date.parse('2025-05-21T00:00:00Z'), endMs: Date.parse('2025-05-22T00:00:00Z') },
];

/** What plans count from the day roll-ups equals a count of the events, for every stream and filter. */
async function expectPlanCountsEqualScans(real: Real, after: string): Promise<void> {
  for (const f of FILTERS) {
    const scanned = await Promise.all(
      INTERVALS.map(async (w) => {
        const r = await real.db.execute<{ n: number }>(sql`select count(*)::int as n from earthquake_events e
          where e.time >= ${new Date(w.startMs).toISOString()}::timestamptz
            and e.time <= ${new Date(w.endMs).toISOString()}::timestamptz and ${storedOfStream(f)}`);
        return r.rows[0]!.n;
      }),
    );
    expect(await countEvents(real.db, f, INTERVALS), `${JSON.stringify(f)} after ${after}`).toEqual(scanned);
  }
}

/** Runs the command, then checks every roll-up against its recount. */
function checked(c: fc.AsyncCommand<Model, Real>): fc.AsyncCommand<Model, Real> {
  return {
    check: () => true,
    async run(m, real) {
      await c.run(m, real);
      expect(await rollupDrift(real.pool), `after ${c.toString()}`).toEqual([]);
      await expectPlanCountsEqualScans(real, c.toString());
    },
    toString: () => c.toString(),
  };
}

describe('maintained roll-ups', () => {
  it(`equal a recount after every step of ${RUNS} random sequences of writes`, async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        await db.db.execute(
          sql`truncate earthquake_events, earthquake_revisions, ingest_streams, gateway_executions, gateway_cost_rollup cascade`,
        );
        await upsertStream(db.db, earthquakeStream(FILTERS[0]!));
        expect(await rollupDrift(db.pool)).toEqual([]);
        await fc.asyncModelRun(() => ({ model: {}, real: db }), [...cmds].map(checked));
      }),
      { numRuns: RUNS, seed: 20_261_126 },
    );
  }, 300_000);
});
