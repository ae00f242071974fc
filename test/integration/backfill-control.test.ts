import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asc, isNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayExecutions, ingestPartitions } from '../../src/db/schema.js';
import { loadUsgsFile, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { BackfillCancelledError, UsageError } from '../../src/errors.js';
import { UndiciGateway } from '../../src/gateway/client.js';
import { setBackfillControl } from '../../src/db/backfills.js';
import { silentLog } from '../../src/log.js';
import { makeCall } from '../../src/worker/call.js';
import { controlOutcome } from '../../src/worker/run-workers.js';
import type { EarthquakeEvent } from '../../src/gateway/schemas.js';
import {
  backfillHalt,
  cancelBackfill,
  pauseBackfill,
  recordBackfill,
  resumeBackfill,
} from '../../src/ingest/backfills.js';
import { enqueueEarthquakeBackfill } from '../../src/ingest/enqueue-backfill.js';
import { reconcileQueues } from '../../src/ingest/reconcile.js';
import { dataFolder } from '@gateway-ingest/emulator';
import { asStored, storedEvents } from '../support/events.js';
import { createTestDatabase, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { ensureStopped, spawnCli, type CliProcess } from '../support/run-cli.js';
import { redisUrlWithDb, waitFor } from '../support/service.js';

const MONTH = `${dataFolder}usgs/all_month_2025-05-06_2025-06-05.csv`;
const KEY = 'test-key-control-0123456789';
const FROM = '2025-05-01T00:00:00Z';
const TO = '2025-06-10T00:00:00Z';
const NOW = () => new Date('2025-07-01T00:00:00Z');
const REQUEST = {
  operation: 'earthquake' as const,
  filters: { minMagnitude: null, circle: null },
  fromMs: Date.parse(FROM),
  toMs: Date.parse(TO),
};
/**
 * docs/design.md "Cost": an uninterrupted newest-first first read of this month bills about 1.47 x its ideal (47, 69
 * calls); a stop at a call boundary must add nothing beyond that bound.
 */
const BILLED_BOUND = Math.ceil(1.6 * 47);

let catalog: EarthquakeEvent[];

beforeAll(async () => {
  catalog = await loadUsgsFile(MONTH);
});

/** Nothing lost, nothing doubled, nothing unaudited: the table holds the catalog, the audit the gateway's calls. */
async function expectWholeAndAudited(db: TestDatabase, emulator: RunningEmulator): Promise<void> {
  expect(await storedEvents(db)).toEqual(asStored(catalog));
  const audit = await db.db.select().from(gatewayExecutions).orderBy(asc(gatewayExecutions.id));
  expect(audit).toHaveLength(emulator.calls.length);
  expect(audit.map((a) => a.executionId).sort()).toEqual(emulator.calls.map((c) => c.executionId).sort());
  const billed = emulator.calls.filter((c) => c.billed).length;
  expect(audit.filter((a) => a.billed).length).toBe(billed);
  expect(billed).toBeLessThanOrEqual(BILLED_BOUND);
}

async function callsInFlight(db: TestDatabase): Promise<number> {
  const [row] = await db.db
    .select({ n: sql<number>`count(*)::int` })
    .from(gatewayExecutions)
    .where(isNull(gatewayExecutions.finishedAt));
  return row!.n;
}

/** No job of the queue waiting, delayed or running, and no call without its answer recorded. */
async function quiet(db: TestDatabase, pipeline: Pipeline): Promise<boolean> {
  const queued = Object.values(
    await pipeline.queues.earthquake.getJobCounts('active', 'waiting', 'delayed', 'prioritized'),
  ).reduce((n, k) => n + k, 0);
  return queued === 0 && (await callsInFlight(db)) === 0;
}

describe.each(['pause', 'cancel'] as const)('%s on a running backfill', (command) => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let pipeline: Pipeline;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Slow answers, so that the backfill is surely running when it is paused or cancelled.
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'newest',
      seed: 42,
      now: NOW,
      latencyMs: 40,
    });
    pipeline = startPipeline(db, emulator, KEY);
  });

  afterAll(async () => {
    await pipeline.close();
    await emulator.close();
    await db.drop();
  });

  const queues = () => ({ earthquake: pipeline.queues.earthquake, indicator: pipeline.queues.indicator });

  it(`${command} stops it at a call boundary; nothing is lost or doubled once it is ${command === 'pause' ? 'resumed' : 'run again'}`, async () => {
    const id = await recordBackfill(db.db, REQUEST, null);
    const summary = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
      ...REQUEST,
      refresh: false,
      backfillId: id,
    });
    expect(summary.planned).toBe(2);
    await waitFor(async () => emulator.calls.length >= 5, 20_000, 'the backfill to be running');

    const r =
      command === 'pause' ? await pauseBackfill(db.db, queues(), id) : await cancelBackfill(db.db, queues(), id);
    expect(r.backfill.control).toBe(command === 'pause' ? 'paused' : 'cancelled');
    // Running jobs finish the calls they are making, then stop: nothing of the backfill is left to run.
    await waitFor(() => quiet(db, pipeline), 20_000, 'the backfill to stop');
    const callsAtStop = emulator.calls.length;
    const parts = await db.db.select().from(ingestPartitions);
    expect(parts.some((p) => p.state !== 'done')).toBe(true);
    // The reconciler does not bring it back.
    expect((await reconcileQueues(db.db, queues())).requeued).toEqual([]);
    expect(await quiet(db, pipeline)).toBe(true);
    expect(emulator.calls.length).toBe(callsAtStop);
    // What was stored so far is the catalog's, field by field: nothing half-written.
    const byId = new Map(asStored(catalog).map((e) => [e.id, e]));
    for (const e of await storedEvents(db)) expect(e).toEqual(byId.get(e.id));

    if (command === 'pause') {
      expect(parts.every((p) => p.state === 'done' || p.state === 'pending' || p.state === 'running')).toBe(true);
      expect(await backfillHalt(db.db, queues(), id, null)).toEqual({ kind: 'paused' });
      const resumed = await resumeBackfill(db.db, queues(), id);
      expect(resumed.backfill.control).toBe('active');
      expect(resumed.requeued).toBe(parts.filter((p) => p.state !== 'done').length);
      expect(await pipeline.run([summary])).toEqual({ total: 2, done: 2, partial: 0, failed: 0 });
    } else {
      // Cancelled partitions are failed with kind `cancelled`, their frontier kept.
      for (const p of parts.filter((x) => x.state !== 'done'))
        expect([p.state, p.lastErrorKind]).toEqual(['failed', 'cancelled']);
      expect(await backfillHalt(db.db, queues(), id, null)).toEqual({ kind: 'cancelled' });
      await expect(resumeBackfill(db.db, queues(), id)).rejects.toThrow(UsageError);
      // A later backfill of the same range plans only what is missing, and resumes it.
      const again = await recordBackfill(db.db, REQUEST, null);
      const rerun = await enqueueEarthquakeBackfill(db.db, pipeline.queues.earthquake, {
        ...REQUEST,
        refresh: false,
        backfillId: again,
      });
      expect(rerun.planned).toBe(parts.filter((p) => p.state !== 'done').length);
      expect(await pipeline.run([rerun])).toMatchObject({ total: rerun.planned, done: rerun.planned });
    }
    await expectWholeAndAudited(db, emulator);
  });
});

/**
 * A gateway in front of the emulator that holds every request while closed: a command run meanwhile
 * (a process start of its own, however slow) finds the backfill running, and cannot miss it.
 */
async function startGate(target: string): Promise<{ url: string; close(): void; open(): void; stop(): Promise<void> }> {
  let held: Array<() => void> | null = null;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forward = () => {
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        fetch(`${target}${req.url ?? '/'}`, { method: req.method ?? 'POST', headers, body: Buffer.concat(chunks) })
          .then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
            res.end(Buffer.from(await answer.arrayBuffer()));
          })
          .catch(() => res.socket?.destroy());
      };
      if (held) held.push(forward);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => void (held ??= []),
    open: () => {
      const waiting = held ?? [];
      held = null;
      for (const f of waiting) f();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('backfill --wait says how a backfill ended', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let gate: Awaited<ReturnType<typeof startGate>>;
  let env: Record<string, string>;
  const running: CliProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({
      key: KEY,
      earthquakeFiles: [MONTH],
      indicatorFiles: [],
      order: 'newest',
      seed: 42,
      now: NOW,
      latencyMs: 20,
    });
    gate = await startGate(emulator.url);
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: redisUrlWithDb(),
      GATEWAY_BASE_URL: gate.url,
      MARKET_KEY: KEY,
      QUEUE_PREFIX: uniquePrefix(),
      RETRY_BASE_DELAY_MS: '20',
      GATEWAY_TIMEOUT_MS: '120000',
      LOG_LEVEL: 'warn',
      // One call at a time: while the gate is closed, nothing of the backfill moves.
      WORKER_CONCURRENCY: '1',
      WINDOW_LANES: '1',
    };
  });

  afterAll(async () => {
    gate.open();
    await Promise.all(running.map((p) => ensureStopped(p)));
    await gate.stop();
    await emulator.close();
    await db.drop();
  });

  const start = (args: string[]) => {
    const p = spawnCli(args, env);
    running.push(p);
    return p;
  };
  const cli = async (args: string[]) => {
    const p = start(args);
    const { code } = await p.exited;
    return { code, out: p.stdout(), err: p.stderr() };
  };

  it('paused by user: 1; cancelled: 1; done: 0', async () => {
    const first = start(['backfill', 'earthquakes', '--from', FROM, '--to', TO, '--inline']);
    const id = await waitFor(
      async () => /backfill (bf-\d{8}-[0-9a-f]{4}): 2 partitions enqueued/.exec(first.stdout())?.[1],
      30_000,
      'the backfill id',
    );
    await waitFor(async () => emulator.calls.length >= 3, 30_000, 'calls');
    gate.close();
    const pause = await cli(['backfill', 'pause', id]);
    expect(pause.code).toBe(0);
    expect(pause.out).toContain(`backfill ${id}: paused`);
    gate.open();
    expect((await first.exited).code, first.stdout()).toBe(1);
    expect(first.stdout()).toMatch(/stopped: 0 done, 0 failed, 2 unfinished of 2 partitions/);
    expect(first.stdout()).toContain(`paused by user: \`gateway-ingest backfill resume ${id}\` continues it`);

    const callsAtPause = emulator.calls.length;
    const second = start(['backfill', 'resume', id, '--inline']);
    await waitFor(async () => emulator.calls.length >= callsAtPause + 2, 30_000, 'the resumed backfill to call');
    gate.close();
    // A stream key stands for its most recent backfill.
    const cancel = await cli(['backfill', 'cancel', 'earthquake:all']);
    expect(cancel.code).toBe(0);
    expect(cancel.out).toContain(`backfill ${id}: cancelled`);
    gate.open();
    expect((await second.exited).code, second.stdout()).toBe(1);
    // A job the paused run was putting back as it closed may still be queued: only jobless partitions are queued again.
    expect(second.stdout()).toMatch(
      new RegExp(`backfill ${id}: active \\(no cap on billed calls\\); [12] partitions queued again`),
    );
    // The wait ends at the cancel; the running job ends after the call it had in flight.
    expect(second.stdout()).toMatch(/^stopped: \d done, \d failed, \d unfinished of 2 partitions$/m);
    expect(second.stdout()).toMatch(/^cancelled: what was written stays/m);
    // Once its workers closed, nothing of it is left unfinished: done, or failed as cancelled.
    const parts = await db.db.select().from(ingestPartitions);
    expect(
      parts.map((p) => (p.state === 'done' ? 'done' : `${p.state}/${p.lastErrorKind}`)).filter((x) => x !== 'done'),
    ).toEqual(Array(parts.filter((p) => p.state !== 'done').length).fill('failed/cancelled'));
    expect(parts.some((p) => p.state === 'failed')).toBe(true);

    const list = await cli(['backfill', 'list']);
    expect(list.out).toMatch(new RegExp(`${id}  cancelled  created`));
    const third = await cli(['backfill', 'earthquakes', '--from', FROM, '--to', TO, '--inline']);
    expect(third.code).toBe(0);
    // Only what the cancel left undone is planned again.
    expect(third.out).toMatch(/finished: ([12]) done, 0 failed, 0 unfinished of \1 partitions/);
    expect(await storedEvents(db)).toEqual(asStored(catalog));
    // Cancelled windows show as failed in status but alert nobody: status exits 0.
    const status = await cli(['status']);
    expect(status.code).toBe(0);
  });
});

describe('a worker that is stopping', () => {
  it("ends a cancelled backfill's job as cancelled rather than putting it back half done; nothing is sent", async () => {
    const db = await createTestDatabase();
    const gateway = new UndiciGateway({
      baseUrl: 'http://127.0.0.1:9',
      key: KEY,
      authHeader: 'authorization',
      timeoutMs: 1_000,
    });
    try {
      const id = await recordBackfill(db.db, REQUEST, null);
      expect(await setBackfillControl(db.db, id, 'cancelled')).toBe(true);
      let sent = 0;
      const call = {
        streamKey: 'earthquake:all',
        partitionKey: 'w',
        jobId: null,
        attempt: 1,
        purpose: 'window',
        backfillId: id,
      };
      const send = async (): Promise<never> => {
        sent += 1;
        throw new Error('sent');
      };
      const made = makeCall({ gateway, db: db.db, log: silentLog(), knowledgeTtlMs: 0 }, call, 'earthquake', {}, send, {
        jobId: null,
        attempt: 1,
        stopping: () => true,
      });
      await expect(made).rejects.toBeInstanceOf(BackfillCancelledError);
      expect(controlOutcome(await made.catch((e: unknown) => e), Date.now())).toMatchObject({ kind: 'cancel' });
      expect(sent).toBe(0);
      expect(await db.db.select().from(gatewayExecutions)).toEqual([]);
    } finally {
      await gateway.close();
      await db.drop();
    }
  });
});
