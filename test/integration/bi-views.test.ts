import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import { enqueueEarthquakeBackfill, enqueueIndicatorBackfill } from '../../src/ingest/enqueue-backfill.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { createTestDatabase, uniqueName, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';

/**
 * The BI views and the gateway_ingest_reader role (migration 0003, docs/bi-and-sql.md "Data for BI"): real
 * data through the emulator, plus the rows the emulator does not produce (a deleted event, a
 * revision, a billed-unknown call, roll-up rows, a partial window), read as a BI user.
 */

const KEY = 'test-key-bi';
const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const GDP = `${dataFolder}worldbank/API_NY.GDP.MKTP.CD_DS2_en_csv_v2.csv`;
const POP = `${dataFolder}worldbank/API_SP.POP.TOTL_DS2_en_csv_v2.csv`;
const NOW = () => new Date('2025-07-01T00:00:00Z');
const ms = (t: string) => Date.parse(t);
const EQ_STREAM = 'earthquake:all';
const EQ_NAME = 'bi-global';
const POP_US = 'indicator:SP.POP.TOTL:US';
const ROLLED_DAY = '2025-01-15';

const README = fileURLToPath(new URL('../../docs/bi-and-sql.md', import.meta.url));

/** The example queries of docs/bi-and-sql.md, verbatim (whitespace aside): the test runs each as a BI user. */
const Q = {
  perDay: `select day, events, max_magnitude, strongest_place from earthquakes_daily order by day;`,
  perMonth: `select month, events, events_m4 + events_m5 + events_m6 + events_m7_plus as m4_and_above, max_magnitude
from earthquakes_monthly order by month;`,
  revisions: `select event_id, old_value as old_magnitude, new_value as new_magnitude, revised_at
from earthquake_revisions where field = 'magnitude' order by revised_at desc limit 20;`,
  byYear: `select country_name, year, value
from indicator_values_by_year where indicator_id = 'SP.POP.TOTL' and year >= 2000
order by country_name, year;`,
  wide: `select country_name, latest_year, latest_value, (values_by_year ->> '1970')::float8 as population_1970
from indicator_values_wide where indicator_id = 'SP.POP.TOTL' order by country_name;`,
  costPerMonth: `select date_trunc('month', day)::date as month, operation, sum(calls) as calls, sum(billed_calls) as billed_calls,
  sum(billed_unknown) as billed_unknown, sum(units) as units
from gateway_cost_daily group by 1, 2 order by 1, 2;`,
  failures: `select day, operation, stream_key, failures, failures_by_kind
from gateway_cost_daily where failures > 0 order by day desc, stream_key;`,
  gaps: `select stream_key, stream_name, from_time, to_time, from_year, to_year
from ingest_coverage where kind = 'gap' order by stream_key, from_time, from_year;`,
} as const;

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The SQL statements of the section "Data for BI" of docs/bi-and-sql.md (comments dropped). */
function readmeStatements(): string[] {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf('\n## Data for BI\n');
  expect(start).toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end);
  const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .join('\n')
    .split('\n')
    .filter((l) => !l.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map(norm)
    .filter((s) => s.length > 0 && !/^(create role|grant) /.test(s))
    .map((s) => `${s};`);
}

const DATA_TABLES = [
  'countries',
  'country_code_aliases',
  'earthquake_events',
  'earthquake_revisions',
  'indicator_code_aliases',
  'indicator_series',
  'indicator_value_revisions',
  'indicator_values',
  'indicators',
];
const VIEWS = [
  'earthquakes',
  'earthquakes_daily',
  'earthquakes_monthly',
  'gateway_cost_daily',
  'gateway_cost_monthly',
  'indicator_values_by_year',
  'indicator_values_wide',
  'ingest_coverage',
];

describe('BI views read through gateway_ingest_reader', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;
  let admin: pg.Client;
  let reader: pg.Client;
  let catalog: EarthquakeEvent[];
  const login = uniqueName('gi_bi_user');
  const password = uniqueName('pw');
  let deletedId: string;
  let revisedId: string;

  const asAdmin = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    (await admin.query<T>(text, values)).rows;
  const asReader = async <T extends pg.QueryResultRow>(text: string) => (await reader.query<T>(text)).rows;

  beforeAll(async () => {
    catalog = await loadUsgsFile(MONTH);
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [GDP, POP],
      order: 'newest',
      seed: 7,
      now: NOW,
    });
    pipeline = startPipeline(db, emulator, KEY);

    // Real data: two earthquake ranges of the same stream (a gap between them), indicator chunks
    // with a gap of years, and a failed series (a `parameters` failure in the audit).
    const filters = { minMagnitude: null, circle: null };
    const eq1 = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters,
      fromMs: ms('2025-05-10T00:00:00Z'),
      toMs: ms('2025-05-12T00:00:00Z'),
      refresh: false,
      streamName: EQ_NAME,
    });
    const eq2 = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      filters,
      fromMs: ms('2025-05-20T00:00:00Z'),
      toMs: ms('2025-05-21T00:00:00Z'),
      refresh: false,
      streamName: EQ_NAME,
    });
    const ind1 = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, {
      indicators: ['SP.POP.TOTL', 'NY.GDP.MKTP.CD'],
      countries: ['US', 'WLD'],
      fromYear: 1960,
      toYear: 1979,
      refresh: false,
    });
    const ind2 = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, {
      indicators: ['SP.POP.TOTL'],
      countries: ['US'],
      fromYear: 2000,
      toYear: 2020,
      refresh: false,
    });
    const bad = await enqueueIndicatorBackfill(db.db, pipeline.queues.indicator, {
      indicators: ['SP.POP.TOTL'],
      countries: ['ZZZ'],
      fromYear: 2000,
      toYear: 2010,
      refresh: false,
    });
    expect(await pipeline.run([eq1, eq2, ...ind1, ...ind2])).toEqual({ total: 7, done: 7, partial: 0, failed: 0 });
    expect(await pipeline.run(bad)).toEqual({ total: 1, done: 0, partial: 0, failed: 1 });

    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();

    // What the emulator does not produce: a deleted event, a revised magnitude, a call whose
    // answer was never recorded, days already rolled up (one of them with audit rows left beside
    // its roll-up row), and a partial window with an unresolved interval.
    const picked = await asAdmin<{ id: string; magnitude: number }>(
      `select id, magnitude from earthquake_events where time between '2025-05-10' and '2025-05-12' and magnitude is not null order by id limit 2`,
    );
    deletedId = picked[0]!.id;
    revisedId = picked[1]!.id;
    await asAdmin(
      `update earthquake_events set deleted_at = now(), deleted_execution_id = last_execution_id where id = $1`,
      [deletedId],
    );
    await asAdmin(
      `insert into earthquake_revisions (event_id, field, old_value, new_value, revised_at) values ($1, 'deleted', null, 'true', now())`,
      [deletedId],
    );
    await asAdmin(`update earthquake_events set magnitude = magnitude + 0.3, revised_at = now() where id = $1`, [
      revisedId,
    ]);
    await asAdmin(
      `insert into earthquake_revisions (event_id, field, old_value, new_value, revised_at) values ($1, 'magnitude', to_jsonb($2::float8), to_jsonb($2::float8 + 0.3), now())`,
      [revisedId, picked[1]!.magnitude],
    );
    await asAdmin(
      `insert into gateway_executions (operation, stream_key, partition_key, request, billed, started_at) values ('earthquake', $1, 'x', '{}', null, now())`,
      [EQ_STREAM],
    );
    for (const [billed, units, kind] of [
      [true, 1, null],
      [false, null, 'timeout'],
    ] as const) {
      await asAdmin(
        `insert into gateway_executions (operation, stream_key, partition_key, request, billed, units, error_kind, started_at, finished_at)
         values ('earthquake', $1, 'old', '{}', $2, $3, $4, $5::timestamptz, $5::timestamptz)`,
        [EQ_STREAM, billed, units, kind, `${ROLLED_DAY}T10:00:00Z`],
      );
    }
    await asAdmin(
      `insert into gateway_executions (operation, stream_key, partition_key, request, billed, units, started_at, finished_at)
       values ('indicator', $1, 'old', '{}', true, 1, $2::timestamptz, $2::timestamptz)`,
      [POP_US, `${ROLLED_DAY}T23:59:59.999Z`],
    );
    await asAdmin(
      `insert into gateway_cost_rollup (day, operation, stream_key, calls, billed_calls, billed_unknown, units, failures_by_kind) values
       ($1, 'earthquake', $2, 10, 7, 1, 7, '{"timeout": 2}'),
       ('2025-01-14', 'indicator', $3, 4, 4, 0, 4, '{}')`,
      [ROLLED_DAY, EQ_STREAM, POP_US],
    );
    // A partial window proves its window less the interval no query could resolve.
    await asAdmin(
      `insert into coverage_proofs (stream_key, lo, hi, proven_at) values ($1, $2, $3, now()), ($1, $4, $5, now())`,
      [
        EQ_STREAM,
        ms('2025-05-25T00:00:00Z'),
        ms('2025-05-25T12:00:00Z'),
        ms('2025-05-25T12:00:02Z'),
        ms('2025-05-26T00:00:00Z'),
      ],
    );

    // A BI user: a login of its own, granted the reader role, as an operator would.
    await asAdmin(`create role ${login} login password '${password}'`);
    await asAdmin(`grant gateway_ingest_reader to ${login}`);
    const url = new URL(db.url);
    url.username = login;
    url.password = password;
    reader = new pg.Client({ connectionString: url.toString() });
    await reader.connect();
  });

  afterAll(async () => {
    await reader?.end();
    await admin?.query(`drop role if exists ${login}`);
    await admin?.end();
    await pipeline?.close();
    await emulator?.close();
    await db?.drop();
  });

  it('the docs section holds exactly the example queries this test runs', () => {
    expect(readmeStatements().sort()).toEqual(Object.values(Q).map(norm).sort());
  });

  it('earthquakes: the current catalog, the deleted event left out, the revision shown', async () => {
    const perDay = await asReader<{ day: Date; events: number; max_magnitude: number | null }>(Q.perDay);
    const inRange = (from: string, to: string) => catalog.filter((e) => ms(e.time) >= ms(from) && ms(e.time) <= ms(to));
    const expected = new Set(
      [
        ...inRange('2025-05-10T00:00:00Z', '2025-05-12T00:00:00Z'),
        ...inRange('2025-05-20T00:00:00Z', '2025-05-21T00:00:00Z'),
      ].map((e) => e.id),
    );
    const total = perDay.reduce((n, d) => n + Number(d.events), 0);
    const [stored] = await asAdmin<{ n: number }>(`select count(*)::int as n from earthquake_events`);
    // Events up to a second outside a window are stored too (docs/design.md, widened boundaries).
    expect(stored!.n).toBeGreaterThanOrEqual(expected.size);
    expect(total).toBe(stored!.n - 1);
    expect(perDay.map((d) => d.day.toISOString().slice(0, 10))).toEqual(
      expect.arrayContaining(['2025-05-10', '2025-05-11', '2025-05-20']),
    );
    // The maintained daily roll-up is what a count of the current catalog per day gives.
    const recount = await asReader<{ day: Date; events: number; max_magnitude: number | null }>(
      `select date_trunc('day', time at time zone 'UTC')::date as day, count(*)::int as events,
         max(magnitude) as max_magnitude from earthquakes group by 1 order by 1`,
    );
    expect(perDay.map((d) => ({ day: d.day, events: d.events, max_magnitude: d.max_magnitude }))).toEqual(recount);
    const perMonth = await asReader<{ events: number }>(Q.perMonth);
    expect(perMonth.reduce((n, m) => n + m.events, 0)).toBe(total);

    const ids = await asReader<{ id: string; magnitude: number; tsunami: boolean }>(
      `select id, magnitude, tsunami from earthquakes`,
    );
    expect(ids.some((e) => e.id === deletedId)).toBe(false);
    expect(ids.map((e) => e.id)).toEqual(expect.arrayContaining([...expected].filter((id) => id !== deletedId)));
    expect(ids.every((e) => typeof e.tsunami === 'boolean')).toBe(true);
    const cols = await asReader<{ column_name: string }>(
      `select column_name from information_schema.columns where table_name = 'earthquakes' order by ordinal_position`,
    );
    expect(cols.map((c) => c.column_name)).toEqual([
      'id',
      'time',
      'magnitude',
      'magnitude_type',
      'place',
      'latitude',
      'longitude',
      'depth_km',
      'tsunami',
      'url',
      'first_seen_at',
      'revised_at',
      'event_key',
    ]);

    const revisions = await asReader<{ event_id: string; old_magnitude: number; new_magnitude: number }>(Q.revisions);
    expect(revisions).toHaveLength(1);
    const revised = ids.find((e) => e.id === revisedId)!;
    expect(revisions[0]!.event_id).toBe(revisedId);
    expect(revisions[0]!.new_magnitude).toBeCloseTo(revised.magnitude, 9);
    expect(revisions[0]!.new_magnitude - revisions[0]!.old_magnitude).toBeCloseTo(0.3, 9);
  });

  it('indicator_values_by_year and indicator_values_wide: names, nulls kept, one wide row per series', async () => {
    const byYear = await asReader<{ country_name: string; year: number; value: number | null }>(Q.byYear);
    const usSince2000 = await asAdmin<{ year: number; value: number | null }>(
      `select year, value from indicator_values where indicator_id = 'SP.POP.TOTL' and country_id = 'US' and year >= 2000 order by year`,
    );
    expect(usSince2000.map((r) => r.year)).toEqual(
      expect.arrayContaining(Array.from({ length: 17 }, (_, i) => 2000 + i)),
    );
    expect(byYear).toEqual(usSince2000.map((r) => ({ country_name: 'United States', ...r })));

    const all = await asReader<{
      indicator_name: string | null;
      country_name: string | null;
      value: number | null;
      last_updated: string | null;
    }>(`select indicator_name, country_name, value, last_updated from indicator_values_by_year`);
    const [stored] = await asAdmin<{ n: number; nulls: number }>(
      `select count(*)::int as n, count(*) filter (where value is null)::int as nulls from indicator_values`,
    );
    expect(all).toHaveLength(stored!.n);
    expect(all.filter((r) => r.value === null)).toHaveLength(stored!.nulls);
    expect(stored!.nulls).toBeGreaterThan(0); // GDP of the world in the 1960s
    expect(all.every((r) => r.indicator_name && r.country_name && r.last_updated)).toBe(true);

    const wide = await asReader<{
      country_name: string;
      latest_year: number;
      latest_value: number;
      population_1970: number;
    }>(Q.wide);
    expect(wide.map((w) => w.country_name)).toEqual(['United States', 'World']);
    const [us1970] = await asAdmin<{ value: number }>(
      `select value from indicator_values where indicator_id = 'SP.POP.TOTL' and country_id = 'US' and year = 1970`,
    );
    expect(wide[0]!.population_1970).toBe(us1970!.value);
    // The bundled file ends in 2016 (its later years are empty cells, stored as nulls).
    const [latest] = await asAdmin<{ year: number; value: number }>(
      `select year, value from indicator_values where indicator_id = 'SP.POP.TOTL' and country_id = 'US' and value is not null order by year desc limit 1`,
    );
    expect(latest!.year).toBe(2016);
    expect(byYear.filter((r) => r.year > 2016).every((r) => r.value === null)).toBe(true);
    expect(wide[0]).toMatchObject({ latest_year: latest!.year, latest_value: latest!.value });
    expect(wide[1]!.latest_year).toBe(1979);

    const series = await asReader<{
      indicator_id: string;
      country_id: string;
      values_by_year: Record<string, number | null>;
    }>(`select indicator_id, country_id, values_by_year from indicator_values_wide`);
    expect(series).toHaveLength(4);
    const rows = await asReader<{ indicator_id: string; country_id: string; year: number; value: number | null }>(
      `select indicator_id, country_id, year, value from indicator_values_by_year`,
    );
    for (const s of series) {
      const own = rows.filter((r) => r.indicator_id === s.indicator_id && r.country_id === s.country_id);
      expect(s.values_by_year).toEqual(Object.fromEntries(own.map((r) => [String(r.year), r.value])));
    }
  });

  it('gateway_cost_daily adds up to the audit, roll-up rows winning for their day, operation and stream', async () => {
    const daily = await asReader<{
      day: string;
      operation: string;
      stream_key: string | null;
      stream_name: string | null;
      calls: number;
      billed_calls: number;
      billed_unknown: number;
      units: number;
      failures: number;
      failures_by_kind: Record<string, number>;
      source: string;
    }>(
      `select to_char(day, 'YYYY-MM-DD') as day, operation, stream_key, stream_name, calls, billed_calls, billed_unknown, units, failures, failures_by_kind, source from gateway_cost_daily`,
    );
    const audit = await asAdmin<{
      day: string;
      operation: string;
      stream_key: string;
      calls: number;
      billed: number;
      unknown: number;
      units: number;
      failures: number;
    }>(
      `select to_char((started_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, operation, stream_key, count(*)::int as calls,
         count(*) filter (where billed)::int as billed, count(*) filter (where billed is null)::int as unknown,
         coalesce(sum(units) filter (where billed), 0)::float8 as units, count(*) filter (where error_kind is not null)::int as failures
       from gateway_executions group by 1, 2, 3`,
    );
    const rolledUp = (a: { day: string; operation: string; stream_key: string }) =>
      a.day === ROLLED_DAY && a.operation === 'earthquake' && a.stream_key === EQ_STREAM;
    // Every (day, operation, stream) of the audit not rolled up is shown exactly as the audit has it.
    for (const a of audit.filter((x) => !rolledUp(x))) {
      const row = daily.find((d) => d.day === a.day && d.operation === a.operation && d.stream_key === a.stream_key);
      expect(row, `${a.day} ${a.operation} ${a.stream_key}`).toMatchObject({
        calls: a.calls,
        billed_calls: a.billed,
        billed_unknown: a.unknown,
        units: a.units,
        failures: a.failures,
        source: 'audit',
      });
    }
    // The rolled-up day: the roll-up row alone, not its two leftover audit rows on top of it.
    expect(daily.filter((d) => d.day === ROLLED_DAY && d.operation === 'earthquake')).toEqual([
      {
        day: ROLLED_DAY,
        operation: 'earthquake',
        stream_key: EQ_STREAM,
        stream_name: EQ_NAME,
        calls: 10,
        billed_calls: 7,
        billed_unknown: 1,
        units: 7,
        failures: 2,
        failures_by_kind: { timeout: 2 },
        source: 'rollup',
      },
    ]);
    // The same day of another stream, not rolled up, still comes from the audit.
    expect(daily.find((d) => d.day === ROLLED_DAY && d.stream_key === POP_US)).toMatchObject({
      calls: 1,
      billed_calls: 1,
      source: 'audit',
    });
    expect(daily.find((d) => d.day === '2025-01-14')).toMatchObject({ stream_key: POP_US, calls: 4, source: 'rollup' });
    expect(daily).toHaveLength(audit.filter((a) => !rolledUp(a)).length + 2);

    // Today's earthquake calls include the one whose answer was never recorded.
    const today = new Date().toISOString().slice(0, 10);
    expect(daily.find((d) => d.day === today && d.stream_key === EQ_STREAM)!.billed_unknown).toBe(1);

    // The monthly totals of the docs example: the audit (less the rolled-up key) plus the roll-up.
    const months = await asReader<{
      month: Date;
      operation: string;
      calls: string;
      billed_calls: string;
      billed_unknown: string;
      units: number;
    }>(Q.costPerMonth);
    const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
    const kept = audit.filter((a) => !rolledUp(a));
    expect(sum(months.map((m) => Number(m.calls)))).toBe(sum(kept.map((a) => a.calls)) + 10 + 4);
    expect(sum(months.map((m) => Number(m.billed_calls)))).toBe(sum(kept.map((a) => a.billed)) + 7 + 4);
    expect(sum(months.map((m) => Number(m.billed_unknown)))).toBe(sum(kept.map((a) => a.unknown)) + 1);
    expect(sum(months.map((m) => m.units))).toBeCloseTo(sum(kept.map((a) => a.units)) + 7 + 4, 6);
    const billedByEmulator = emulator.calls.filter((c) => c.billed).length;
    expect(sum(kept.map((a) => a.billed))).toBe(billedByEmulator + 1); // + the billed row of the indicator stream on the rolled-up day
    expect(
      months.find((m) => m.operation === 'earthquake' && m.month.toISOString().startsWith('2025-01')),
    ).toMatchObject({ calls: '10' });

    const failures = await asReader<{
      day: string;
      stream_key: string;
      failures: number;
      failures_by_kind: Record<string, number>;
    }>(Q.failures);
    expect(failures.find((f) => f.stream_key === 'indicator:SP.POP.TOTL:ZZZ')).toMatchObject({
      failures: 1,
      failures_by_kind: { parameters: 1 },
    });
    expect(failures.find((f) => f.stream_key === EQ_STREAM)).toMatchObject({
      failures: 2,
      failures_by_kind: { timeout: 2 },
    });
  });

  it('ingest_coverage: covered ranges and the gaps between them, unresolved intervals of a partial window as gaps', async () => {
    const gaps = await asReader<{
      stream_key: string;
      stream_name: string | null;
      from_time: Date | null;
      to_time: Date | null;
      from_year: number | null;
      to_year: number | null;
    }>(Q.gaps);
    const iso = (d: Date | null) => d?.toISOString() ?? null;
    expect(gaps.map((g) => ({ ...g, from_time: iso(g.from_time), to_time: iso(g.to_time) }))).toEqual([
      {
        stream_key: EQ_STREAM,
        stream_name: EQ_NAME,
        from_time: '2025-05-12T00:00:00.000Z',
        to_time: '2025-05-20T00:00:00.000Z',
        from_year: null,
        to_year: null,
      },
      {
        stream_key: EQ_STREAM,
        stream_name: EQ_NAME,
        from_time: '2025-05-21T00:00:00.000Z',
        to_time: '2025-05-25T00:00:00.000Z',
        from_year: null,
        to_year: null,
      },
      {
        stream_key: EQ_STREAM,
        stream_name: EQ_NAME,
        from_time: '2025-05-25T12:00:00.000Z',
        to_time: '2025-05-25T12:00:02.000Z',
        from_year: null,
        to_year: null,
      },
      { stream_key: POP_US, stream_name: null, from_time: null, to_time: null, from_year: 1980, to_year: 1999 },
    ]);

    const all = await asReader<{
      stream_key: string;
      operation: string;
      kind: string;
      from_time: Date | null;
      to_time: Date | null;
      from_year: number | null;
      to_year: number | null;
    }>(
      `select stream_key, operation, kind, from_time, to_time, from_year, to_year from ingest_coverage order by stream_key, kind, from_time, from_year`,
    );
    const covered = (key: string) => all.filter((r) => r.stream_key === key && r.kind === 'covered');
    expect(covered(EQ_STREAM).map((r) => [iso(r.from_time), iso(r.to_time)])).toEqual([
      ['2025-05-10T00:00:00.000Z', '2025-05-12T00:00:00.000Z'],
      ['2025-05-20T00:00:00.000Z', '2025-05-21T00:00:00.000Z'],
      ['2025-05-25T00:00:00.000Z', '2025-05-25T12:00:00.000Z'],
      ['2025-05-25T12:00:02.000Z', '2025-05-26T00:00:00.000Z'],
    ]);
    expect(covered(POP_US).map((r) => [r.from_year, r.to_year])).toEqual([
      [1960, 1979],
      [2000, 2020],
    ]);
    for (const key of ['indicator:SP.POP.TOTL:WLD', 'indicator:NY.GDP.MKTP.CD:US', 'indicator:NY.GDP.MKTP.CD:WLD']) {
      expect(all.filter((r) => r.stream_key === key).map((r) => [r.operation, r.kind, r.from_year, r.to_year])).toEqual(
        [['indicator', 'covered', 1960, 1979]],
      );
    }
    // A series with nothing done has no rows.
    expect(all.some((r) => r.stream_key === 'indicator:SP.POP.TOTL:ZZZ')).toBe(false);
  });

  it('the reader may read the data tables and every view, and nothing else; it may write nowhere', async () => {
    const relations = await asAdmin<{ name: string; kind: string }>(
      `select c.relname as name, c.relkind::text as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p') order by 1`,
    );
    const readable = await asReader<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p') and has_table_privilege(c.oid, 'SELECT') order by 1`,
    );
    const views = relations.filter((r) => r.kind === 'v' || r.kind === 'm').map((r) => r.name);
    expect(views).toEqual(expect.arrayContaining(VIEWS));
    // Every view is for BI and must be granted (a later migration adding one grants it too); no other table is.
    expect(readable.map((r) => r.name)).toEqual([...DATA_TABLES, ...views].sort());

    const writable = await asReader<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname in ('public', 'drizzle') and (
         (c.relkind in ('r', 'v', 'm', 'p') and has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER'))
         or (c.relkind = 'S' and has_sequence_privilege(c.oid, 'USAGE, SELECT, UPDATE')))`,
    );
    expect(writable).toEqual([]);

    // permission denied; a view that is not automatically updatable refuses any write before that (55000).
    const denied = async (statement: string, codes = ['42501']) => {
      const error = await reader.query(statement).then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
      expect(error, statement).not.toBeNull();
      expect(codes, `${statement}: ${String(error)}`).toContain(error!.code);
    };
    for (const { name, kind } of relations) {
      const codes = kind === 'v' ? ['42501', '55000'] : ['42501'];
      await denied(`insert into ${name} default values`, codes);
      await denied(`delete from ${name}`, codes);
      if (kind !== 'v') {
        const [col] = await asAdmin<{ column_name: string }>(
          `select column_name from information_schema.columns where table_schema = 'public' and table_name = $1 order by ordinal_position limit 1`,
          [name],
        );
        await denied(`update ${name} set ${col!.column_name} = ${col!.column_name}`);
        await denied(`truncate ${name}`);
      } else {
        const col = (
          {
            earthquakes: 'place',
            earthquakes_daily: 'day',
            earthquakes_monthly: 'month',
            gateway_cost_monthly: 'month',
            indicator_values_by_year: 'year',
            indicator_values_wide: 'first_year',
            gateway_cost_daily: 'day',
            ingest_coverage: 'kind',
          } as Record<string, string>
        )[name]!;
        await denied(`update ${name} set ${col} = ${col}`, codes);
      }
    }
    for (const table of [
      'gateway_executions',
      'gateway_cost_rollup',
      'ingest_partitions',
      'ingest_streams',
      'backfills',
      'budget_counters',
      'gateway_knowledge',
    ]) {
      await denied(`select * from ${table} limit 1`);
    }
    await denied(`create table bi_scratch (x int)`);
    await denied(`create view bi_scratch as select 1 as x`);
  });
});
