import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { earthquakeEvents, gatewayExecutions, indicatorValues } from '../../src/db/schema.js';
import { startEmulator } from '@gateway-ingest/emulator';
import { dataFolder } from '@gateway-ingest/emulator';
import type { TestDatabase } from '../support/isolation.js';
import { spawnCli } from '../support/run-cli.js';
import {
  quake,
  randomKey,
  startServiceFixture,
  waitFor,
  type InProcessService,
  type JobsDir,
  type ServiceFixture,
} from '../support/service.js';
import { currentYearEverywhere } from '../../src/domain/time.js';

const POP = `${dataFolder}worldbank/API_SP.POP.TOTL_DS2_en_csv_v2.csv`;
const HOUR = 3_600_000;

const JOBS = `
earthquakes:
  - name: recent
    every: 1s
    lookback: 1d
indicators:
  - name: population
    indicators: [SP.POP.TOTL]
    countries: [USA]
    from_year: 2015
    every: 1s
`;

/** The value of one sample of the Prometheus text format, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('start: scheduled runs', () => {
  let f: ServiceFixture;
  let db: TestDatabase;
  let svc: InProcessService;
  let jobs: JobsDir;
  const key = randomKey();
  const now = Date.now();
  const original = quake('ci-rev-1', now - 2 * HOUR, 3.1, '10 km N of Alpha');
  const revised = { ...quake('ci-rev-1', now - 2 * HOUR, 3.6, '12 km NNE of Alpha'), depth_km: 9.1 };
  const added = quake('ci-new-2', now - HOUR / 2, 2.4, 'Beta');

  beforeAll(async () => {
    f = await startServiceFixture({ key, events: [original], indicatorFiles: [POP], jobsYaml: JOBS });
    ({ db, svc, jobs } = f);
  });

  afterAll(async () => {
    await f?.stop();
  });

  const event = async (id: string) =>
    (await db.db.select().from(earthquakeEvents).where(eq(earthquakeEvents.id, id)))[0];
  const metrics = async () => (await fetch(`${svc.url}/metrics`)).text();

  it('answers health and readiness', async () => {
    const health = await fetch(`${svc.url}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${svc.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([
      200,
      { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } },
    ]);
  });

  it('ingests the lookback, then picks up a revised event and a new one; metrics move', async () => {
    await waitFor(async () => (await event('ci-rev-1'))?.magnitude === 3.1, 20_000, 'the first run');
    const before = await metrics();
    const callsBefore = sample(before, 'gateway_ingest_gateway_calls_total{operation="earthquake",error_kind="none"}');
    expect(callsBefore).toBeGreaterThan(0);
    expect(sample(before, 'gateway_ingest_rows_upserted_total{operation="earthquake"}')).toBeGreaterThanOrEqual(1);

    // The catalog revises the event and adds one: same gateway address, new answers.
    const port = Number(new URL(f.emulator.url).port);
    await f.emulator.close();
    f.emulator = await startEmulator({ key, port, events: [revised, added], indicatorFiles: [POP] });

    await waitFor(
      async () => (await event('ci-rev-1'))?.magnitude === 3.6 && (await event('ci-new-2')),
      20_000,
      'a run after the revision',
    );
    const row = await event('ci-rev-1');
    expect(row).toMatchObject({ place: '12 km NNE of Alpha', depthKm: 9.1 });
    expect(row?.revisedAt).toBeInstanceOf(Date);
    expect(await event('ci-new-2')).toMatchObject({ magnitude: 2.4, place: 'Beta' });

    const after = await metrics();
    expect(
      sample(after, 'gateway_ingest_gateway_calls_total{operation="earthquake",error_kind="none"}'),
    ).toBeGreaterThan(callsBefore);
    expect(sample(after, 'gateway_ingest_gateway_billed_calls_total{operation="earthquake"}')).toBeGreaterThan(
      callsBefore - 1,
    );
    expect(sample(after, 'gateway_ingest_gateway_units_total{operation="earthquake"}')).toBeGreaterThanOrEqual(3);
    expect(sample(after, 'gateway_ingest_rows_upserted_total{operation="earthquake"}')).toBeGreaterThanOrEqual(3);
    expect(
      sample(after, 'gateway_ingest_job_duration_seconds_count{queue="earthquake-windows",status="completed"}'),
    ).toBeGreaterThan(0);
    expect(
      sample(after, 'gateway_ingest_job_duration_seconds_count{queue="schedule-ticks",status="completed"}'),
    ).toBeGreaterThan(0);
    expect(after).toMatch(/^gateway_ingest_queue_depth\{queue="earthquake-windows",state="waiting"\} \d+$/m);
    expect(after).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('refreshes indicator series on every run', async () => {
    await waitFor(
      async () => {
        const calls = await db.db
          .select()
          .from(gatewayExecutions)
          .where(and(eq(gatewayExecutions.operation, 'indicator'), eq(gatewayExecutions.outcome, 'succeeded')));
        return calls.length >= 2;
      },
      20_000,
      'two indicator runs',
    );
    const values = await db.db.select().from(indicatorValues).where(eq(indicatorValues.indicatorId, 'SP.POP.TOTL'));
    // The fixture's series ends with 2016 (2017 is present but empty).
    expect(
      values
        .filter((v) => v.value !== null)
        .map((v) => v.year)
        .sort(),
    ).toEqual([2015, 2016]);
    const text = await metrics();
    expect(sample(text, 'gateway_ingest_gateway_billed_calls_total{operation="indicator"}')).toBeGreaterThanOrEqual(2);
  });

  it('status shows schedule, freshness, coverage and money per stream', async () => {
    const env = { DATABASE_URL: db.url, LOG_LEVEL: 'warn' };
    const json = spawnCli(['status', '--json', '--config', jobs.path], env);
    expect((await json.exited).code).toBe(0);
    const report = JSON.parse(json.stdout()) as Array<Record<string, unknown>>;
    const quakes = report.find((r) => r.name === 'recent');
    expect(quakes).toMatchObject({
      streamKey: 'earthquake:all',
      schedule: 'every 1s',
      enabled: true,
      freshness: { newestEventTime: new Date(added.time).toISOString() },
    });
    expect(quakes?.billedCalls).toBeGreaterThan(0);
    expect(quakes?.coverage).toMatchObject({ unit: 'time' });
    const population = report.find((r) => r.streamKey === 'indicator:SP.POP.TOTL:USA');
    const year = currentYearEverywhere(Date.now());
    expect(population).toMatchObject({
      name: 'population',
      freshness: { lastValueYear: 2016 },
      coverage: { unit: 'year', from: 2015, to: year, coveredFraction: 1, gaps: [] },
    });

    const text = spawnCli(['status', '--config', jobs.path], env);
    expect((await text.exited).code).toBe(0);
    expect(text.stdout()).toContain('recent (earthquake:all)\n  schedule: every 1s\n');
    expect(text.stdout()).toContain(`  freshness: newest event ${new Date(added.time).toISOString()}`);
    expect(text.stdout()).toContain(`  coverage 2015 .. ${year}: 100.00%, no gaps`);
  });
});
