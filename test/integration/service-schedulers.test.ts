import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJobsFile } from '../../src/config/jobs-file.js';
import { startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { dataFolder } from '@gateway-ingest/emulator';
import { desiredSchedulers, syncSchedulers } from '../../src/service/schedulers.js';
import { createTestDatabase, trustGatewayCap, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { ensureStopped, spawnCli, type CliProcess, type LogLine } from '../support/run-cli.js';
import {
  dropPrefix,
  ingestQueues,
  jobsDir,
  randomKey,
  serviceEnv,
  tickQueue,
  waitFor,
  type JobsDir,
} from '../support/service.js';

const GDP = `${dataFolder}worldbank/API_NY.GDP.MKTP.CD_DS2_en_csv_v2.csv`;

const BEFORE = `
earthquakes:
  - name: quakes
    every: 1h
    lookback: 1d
indicators:
  - name: gdp
    indicators: [NY.GDP.MKTP.CD]
    countries: [US]
    every: 1h
`;

const AFTER = `
earthquakes:
  - name: quakes
    schedule: "0 3 * * *"
    lookback: 1d
  - name: quakes-b
    min_magnitude: 4
    every: 2h
`;

/** Tick jobs per scheduler id and state, as BullMQ names them (`repeat:<scheduler>:<millis>`). */
async function ticksByScheduler(
  queue: Queue,
  states: Array<'delayed' | 'waiting' | 'active' | 'completed'>,
): Promise<Record<string, number>> {
  const jobs = await queue.getJobs(states);
  const out: Record<string, number> = {};
  for (const j of jobs) {
    const id = (j.id ?? '').replace(/^repeat:/, '').replace(/:\d+$/, '');
    out[id] = (out[id] ?? 0) + 1;
  }
  return out;
}

/**
 * Every tick run and every job it enqueued fetched: no tick waiting or running and the ingest
 * queues empty. A duplicate run would be in the counts by then, not still to come.
 */
async function settled(ticks: Queue, ingest: Queue[]): Promise<boolean> {
  const running = await ticksByScheduler(ticks, ['waiting', 'active']);
  if (Object.keys(running).length > 0) return false;
  for (const q of ingest) {
    const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    if (Object.values(counts).some((n) => n > 0)) return false;
  }
  return true;
}

async function schedulerIds(queue: Queue): Promise<string[]> {
  return (await queue.getJobSchedulers()).map((s) => s.key).sort();
}

describe('syncSchedulers', () => {
  const prefix = uniquePrefix();
  const ticks = tickQueue(prefix);
  const now = () => new Date();

  afterAll(async () => {
    await ticks.close();
    await dropPrefix(prefix);
  });

  it('adds, updates and removes schedulers as the file changes; concurrent syncs converge', async () => {
    const before = desiredSchedulers(parseJobsFile(BEFORE, 'before.yaml', now));
    const after = desiredSchedulers(parseJobsFile(AFTER, 'after.yaml', now));
    const other = tickQueue(prefix);
    try {
      const [a, b] = await Promise.all([syncSchedulers(ticks.queue, before), syncSchedulers(other.queue, before)]);
      expect([...a.upserted, ...a.unchanged].sort()).toEqual(['earthquake:quakes', 'indicator:gdp']);
      expect([...b.upserted, ...b.unchanged].sort()).toEqual(['earthquake:quakes', 'indicator:gdp']);
    } finally {
      await other.close();
    }
    expect(await schedulerIds(ticks.queue)).toEqual(['earthquake:quakes', 'indicator:gdp']);
    expect(await ticksByScheduler(ticks.queue, ['delayed', 'waiting'])).toEqual({
      'earthquake:quakes': 1,
      'indicator:gdp': 1,
    });

    const again = await syncSchedulers(ticks.queue, before);
    expect(again).toEqual({ upserted: [], unchanged: ['earthquake:quakes', 'indicator:gdp'], removed: [] });

    const changed = await syncSchedulers(ticks.queue, after);
    expect(changed).toEqual({
      upserted: ['earthquake:quakes', 'earthquake:quakes-b'],
      unchanged: [],
      removed: ['indicator:gdp'],
    });
    const stored = await ticks.queue.getJobSchedulers();
    const quakes = stored.find((s) => s.key === 'earthquake:quakes');
    expect(quakes).toMatchObject({ pattern: '0 3 * * *', tz: 'UTC' });
    expect(quakes?.every).toBeUndefined();
    expect(stored.find((s) => s.key === 'earthquake:quakes-b')).toMatchObject({ every: 7_200_000 });
    expect(await ticksByScheduler(ticks.queue, ['delayed', 'waiting'])).toEqual({
      'earthquake:quakes': 1,
      'earthquake:quakes-b': 1,
    });
    expect(await syncSchedulers(ticks.queue, after)).toMatchObject({ upserted: [], removed: [] });
  });
});

describe('two `start` processes sharing Redis and Postgres', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let jobs: JobsDir;
  const prefix = uniquePrefix();
  const key = randomKey();
  const ticks = tickQueue(prefix);
  const ingest = ingestQueues(prefix);
  const procs: CliProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ key, earthquakeFiles: [], indicatorFiles: [GDP] });
    await trustGatewayCap(db, emulator.url);
    jobs = jobsDir();
    jobs.write(BEFORE);
  });

  afterAll(async () => {
    await Promise.all(procs.map(ensureStopped));
    await ticks.close();
    await ingest.close();
    await emulator.close();
    await db.drop();
    jobs.remove();
    await dropPrefix(prefix);
  });

  it('never duplicate schedulers or runs, and both follow edits of jobs.yaml', async () => {
    const env = serviceEnv({ databaseUrl: db.url, prefix, gatewayUrl: emulator.url, key });
    for (let i = 0; i < 2; i++) procs.push(spawnCli(['start', '--config', jobs.path], env));
    await Promise.all(procs.map((p) => p.waitForLog((l) => l.msg === 'service started')));

    // `every` schedulers run once at creation: one run per stream in all, not one per replica.
    await waitFor(async () => emulator.calls.length >= 2, 20_000, 'the first scheduled runs');
    await waitFor(() => settled(ticks.queue, ingest.queues), 20_000, 'the first runs to settle');
    expect(emulator.calls.map((c) => c.operation).sort()).toEqual(['earthquake', 'indicator']);
    expect(await schedulerIds(ticks.queue)).toEqual(['earthquake:quakes', 'indicator:gdp']);
    expect(await ticksByScheduler(ticks.queue, ['completed'])).toEqual({ 'earthquake:quakes': 1, 'indicator:gdp': 1 });
    expect(await ticksByScheduler(ticks.queue, ['delayed', 'waiting', 'active'])).toEqual({
      'earthquake:quakes': 1,
      'indicator:gdp': 1,
    });

    // One replica is told (SIGHUP), the other notices by polling the file.
    jobs.write(AFTER);
    procs[0]!.child.kill('SIGHUP');
    await Promise.all(procs.map((p) => p.waitForLog((l) => l.msg === 'jobs file changed', 15_000)));
    await waitFor(
      async () => (await schedulerIds(ticks.queue)).join() === 'earthquake:quakes,earthquake:quakes-b',
      10_000,
      'schedulers to follow the edit',
    );
    const quakes = (await ticks.queue.getJobSchedulers()).find((s) => s.key === 'earthquake:quakes');
    expect(quakes).toMatchObject({ pattern: '0 3 * * *', tz: 'UTC' });
    await waitFor(
      async () => (await ticksByScheduler(ticks.queue, ['completed']))['earthquake:quakes-b'] === 1,
      10_000,
      'the new stream to run',
    );
    // Both replicas synced the edit: any scheduler or tick either of them would add is there now.
    const syncedEdit = (l: LogLine) =>
      l.msg === 'schedulers synced' && [l.upserted, l.unchanged].flat().includes('earthquake:quakes-b');
    await Promise.all(procs.map((p) => p.waitForLog(syncedEdit, 10_000)));
    await waitFor(() => settled(ticks.queue, ingest.queues), 20_000, 'the edited runs to settle');
    expect(await ticksByScheduler(ticks.queue, ['delayed', 'waiting', 'active'])).toEqual({
      'earthquake:quakes': 1,
      'earthquake:quakes-b': 1,
    });
    expect((await ticksByScheduler(ticks.queue, ['completed']))['earthquake:quakes-b']).toBe(1);

    for (const p of procs) p.child.kill('SIGTERM');
    const exits = await Promise.all(procs.map((p) => p.exited));
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
