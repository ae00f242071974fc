import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, asc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import {
  backfills,
  budgetCounters,
  gatewayCostRollup,
  gatewayExecutions,
  ingestPartitions,
} from '../../src/db/schema.js';
import { currentYearEverywhere, DAY_MS, toRfc3339 } from '../../src/domain/time.js';
import { dataFolder, startEmulator, type RunningEmulator } from '@gateway-ingest/emulator';
import { packageRoot } from '../../src/paths.js';
import { createTestDatabase, trustGatewayCap, uniquePrefix, type TestDatabase } from '../support/isolation.js';
import {
  dropPrefix,
  jobsDir,
  quake,
  randomKey,
  startInProcess,
  waitFor,
  type InProcessService,
  type JobsDir,
} from '../support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const NO_CHROMIUM = `SKIPPED: ${CHROMIUM} is absent (install Debian's chromium: apt-get install -y chromium)`;
if (!HAS_CHROMIUM) console.warn(`dashboard browser tests ${NO_CHROMIUM}`);
const inBrowser = (name: string) => (HAS_CHROMIUM ? name : `${name} [${NO_CHROMIUM}]`);

const POP = `${dataFolder}worldbank/API_SP.POP.TOTL_DS2_en_csv_v2.csv`;
const GDP = `${dataFolder}worldbank/API_NY.GDP.MKTP.CD_DS2_en_csv_v2.csv`;
const TOKEN = 'dashboard-token-for-tests-0123456789';
const CAP = 50;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const NOW = Date.now();
const FAILED_ERROR = 'gateway answered 500 <script>alert("x")</script>';

/**
 * The repository's own `macro` stream (2 indicators x 5 countries: ten series), its Monday cron
 * swapped for `every`, whose first run is at once; hourly keeps later runs (which re-read and so
 * reset partitions) away.
 */
function macroOfRepo(): Record<string, unknown> {
  const file = parseYaml(readFileSync(join(packageRoot, 'jobs.yaml'), 'utf8')) as {
    indicators: Array<{ name: string }>;
  };
  const { schedule: _schedule, ...macro } = file.indicators.find((s) => s.name === 'macro') as Record<string, unknown>;
  return { ...macro, every: '1h' };
}

const JOBS = stringifyYaml({
  earthquakes: [{ name: 'recent', every: '1h', lookback: '1d', backfill_from: day(NOW - 5 * DAY_MS) }],
  indicators: [macroOfRepo()],
});
const MACRO_SERIES = 10;
const RESOLVED_ERROR = 'gateway answered 500 (a retry overcame it)';
const RESOLVED_SERIES = 'indicator:SP.POP.TOTL:US';

/** A service whose only stream is disabled: nothing runs, but its board and routes are there. */
const IDLE_JOBS = `
earthquakes:
  - name: idle
    every: 1h
    enabled: false
`;

function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
}

async function launch(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'gi-chromium-'));
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

describe('dashboard: status page and Bull Board', () => {
  let db: TestDatabase;
  let emulator: RunningEmulator;
  let open: InProcessService;
  let locked: InProcessService;
  let jobs: JobsDir;
  let idleJobs: JobsDir;
  const prefixes = [uniquePrefix(), uniquePrefix()];
  const key = randomKey();
  const event = quake('dash-1', NOW - 3_600_000, 3.4, '5 km S of <b>Gamma</b>');
  let overcameAt: Date;

  /** What the service would not produce by itself in a test: a failed window, roll-ups, budgets, backfills. */
  async function seed(): Promise<void> {
    await db.db.insert(backfills).values({
      id: 'bf-paused',
      operation: 'earthquake',
      description: 'earthquakes 2024 m2.5',
      streamKeys: ['earthquake:all'],
      control: 'paused',
      maxBilledCalls: 100,
    });
    await db.db.insert(ingestPartitions).values({
      streamKey: 'earthquake:all',
      partitionKey: 'dash-failed',
      operation: 'earthquake',
      state: 'failed',
      backfillId: 'bf-paused',
      windowStart: new Date(NOW - 3 * DAY_MS),
      windowEnd: new Date(NOW - 2 * DAY_MS),
      lastError: FAILED_ERROR,
      lastErrorKind: 'server',
    });
    // Workers count every call in today's counter, capped or not: the seed sets it to a known value.
    await db.db
      .insert(budgetCounters)
      .values([
        { scope: 'backfill:bf-paused', day: '1970-01-01', calls: 12 },
        { scope: 'day', day: day(Date.now()), calls: 7 },
      ])
      .onConflictDoUpdate({ target: [budgetCounters.scope, budgetCounters.day], set: { calls: sql`excluded.calls` } });
    await db.db.insert(gatewayCostRollup).values({
      day: day(NOW - 10 * DAY_MS),
      operation: 'earthquake',
      streamKey: 'earthquake:all',
      calls: 45,
      billedCalls: 40,
      billedUnknown: 0,
      units: 1234,
      failuresByKind: {},
    });
    overcameAt = await seedOvercomeError();
  }

  /**
   * A failed call of one macro series just before its first answered call, as a retry that
   * succeeded leaves it: the error is over, and the first success after it is when.
   */
  async function seedOvercomeError(): Promise<Date> {
    const answered = (partitionKey?: string) =>
      and(
        eq(gatewayExecutions.streamKey, RESOLVED_SERIES),
        partitionKey === undefined ? undefined : eq(gatewayExecutions.partitionKey, partitionKey),
        isNull(gatewayExecutions.errorKind),
        isNotNull(gatewayExecutions.finishedAt),
      );
    const [call] = await db.db
      .select()
      .from(gatewayExecutions)
      .where(answered())
      .orderBy(asc(gatewayExecutions.startedAt))
      .limit(1);
    const failedAt = new Date(call!.startedAt.getTime() - 1_000);
    await db.db.insert(gatewayExecutions).values({
      operation: 'indicator',
      streamKey: RESOLVED_SERIES,
      partitionKey: call!.partitionKey,
      request: call!.request,
      httpStatus: 500,
      billed: false,
      errorKind: 'server',
      errorDetail: RESOLVED_ERROR,
      startedAt: failedAt,
      finishedAt: new Date(failedAt.getTime() + 50),
    });
    const [first] = await db.db
      .select({ finishedAt: gatewayExecutions.finishedAt })
      .from(gatewayExecutions)
      .where(answered(call!.partitionKey!))
      .orderBy(asc(gatewayExecutions.finishedAt))
      .limit(1);
    return first!.finishedAt!;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    emulator = await startEmulator({ key, events: [event], indicatorFiles: [POP, GDP] });
    await trustGatewayCap(db, emulator.url);
    jobs = jobsDir();
    jobs.write(JOBS);
    idleJobs = jobsDir();
    idleJobs.write(IDLE_JOBS);
    const args = { databaseUrl: db.url, gatewayUrl: emulator.url, key };
    open = await startInProcess({ ...args, prefix: prefixes[0]! }, jobs.path, { budget: { billedCallsPerDay: CAP } });
    locked = await startInProcess({ ...args, prefix: prefixes[1]! }, idleJobs.path, { dashboardToken: TOKEN });
    const ingested = async () => {
      const parts = await db.db.select().from(ingestPartitions);
      const streams = new Set(parts.map((p) => p.streamKey));
      return streams.size === 1 + MACRO_SERIES && parts.every((p) => p.state === 'done');
    };
    await waitFor(ingested, 60_000, 'the first scheduled runs');
    await seed();
  });

  afterAll(async () => {
    await open?.stop();
    await locked?.stop();
    await emulator?.close();
    await db?.drop();
    jobs?.remove();
    idleJobs?.remove();
    for (const p of prefixes) await dropPrefix(p);
  });

  it.skipIf(!HAS_CHROMIUM)(
    inBrowser(
      'the status page shows one card per jobs.yaml stream, errors as current or resolved, the 30-day chart and budgets',
    ),
    async () => {
      const browser = await launch();
      try {
        const page = await browser.context.newPage();
        const response = await page.goto(`${open.url}/`);
        expect(response?.status()).toBe(200);
        await expect(page.title()).resolves.toBe('gateway-ingest status');

        // One card per stream of the jobs file, however many series a stream reads; nothing ad hoc.
        const cards = page.locator('article.card.stream');
        expect(
          await cards.evaluateAll((els: Array<{ getAttribute(name: string): string | null }>) =>
            els.map((e) => e.getAttribute('data-card')),
          ),
        ).toEqual(['jobs:recent', 'jobs:macro']);
        expect(await page.locator('#ad-hoc').count()).toBe(0);

        const quakes = page.locator('article[data-stream="recent"]');
        await expect(quakes.locator('h3').textContent()).resolves.toMatch(
          /^recent\s+earthquake:all\s+earthquake\s+failed/,
        );
        expect(await quakes.getAttribute('data-state')).toBe('failed');
        expect(await quakes.textContent()).toContain(`newest event ${event.time.replace('.000Z', 'Z')}`);
        expect(await quakes.locator('svg.timeline rect[data-state="done"]').count()).toBeGreaterThan(0);
        expect(await quakes.locator('svg.timeline rect[data-state="failed"]').count()).toBe(1);
        expect(await quakes.locator('p.coverage').textContent()).toMatch(/coverage .* \.\. now: \d+\.\d\d%, \d+ gaps?/);
        // A failed window's error is current. Text from the database is shown as text, never run as markup.
        expect(await quakes.locator('ul.problems li.current').textContent()).toContain(FAILED_ERROR);
        expect(await page.locator('script').count()).toBe(0);

        const macro = page.locator('article[data-stream="macro"]');
        await expect(macro.locator('h3').textContent()).resolves.toMatch(/^macro\s+indicator\s+ingested\s*$/);
        expect(await macro.getAttribute('data-state')).toBe('done');
        expect(await macro.textContent()).toMatch(/partitions: (\d+) of \1 ingested, 0 queued/);
        expect(await macro.textContent()).toMatch(/last year with a value \d{4}/);
        expect(await macro.locator('p.coverage').textContent()).toContain(
          `coverage of ${MACRO_SERIES} series 1960 .. ${currentYearEverywhere(Date.now())}: 100.00%, no gaps`,
        );
        expect(await macro.locator('tr[data-series]').count()).toBe(MACRO_SERIES);
        // The error a retry overcame reads as resolved, with the time of that success; nothing reads as current.
        expect(await macro.locator('.current').count()).toBe(0);
        expect(await macro.locator('ul.problems').count()).toBe(0);
        const resolved = macro.locator('p.resolved');
        expect(await resolved.textContent()).toContain(RESOLVED_ERROR);
        expect(await resolved.getAttribute('data-overcame-at')).toBe(overcameAt.toISOString());
        expect(await resolved.textContent()).toContain(
          `overcome by a later success at ${toRfc3339(overcameAt.getTime())}`,
        );
        await macro.locator('details.series summary').click();

        const bars = page.locator('#billed-chart g.bar');
        expect(await bars.count()).toBe(30);
        expect(
          await page.locator(`#billed-chart g.bar[data-day="${day(NOW - 10 * DAY_MS)}"]`).getAttribute('data-billed'),
        ).toBe('40');
        expect(Number(await bars.last().getAttribute('data-billed'))).toBeGreaterThan(0);
        expect(await page.locator('#billed-chart').textContent()).toContain(`daily cap ${CAP}`);

        expect(await page.locator('#day-budget').textContent()).toMatch(
          new RegExp(`BILLED_CALLS_PER_DAY ${CAP}\\. Today \\(${day(Date.now())}\\): \\d+ used, \\d+ left`),
        );
        const backfill = page.locator('tr[data-backfill="bf-paused"]');
        expect(await backfill.textContent()).toContain('paused');
        expect(await backfill.textContent()).toContain('12 of 100');
        expect(await backfill.textContent()).toContain('0 of 1 ingested, 1 failed');

        mkdirSync(join(packageRoot, 'test-results'), { recursive: true });
        await page.screenshot({ path: join(packageRoot, 'test-results/dashboard.png'), fullPage: true });
      } finally {
        await browser.close();
      }
    },
  );

  it.skipIf(!HAS_CHROMIUM)(inBrowser('Bull Board renders the three queues, read-only without a token'), async () => {
    const browser = await launch();
    try {
      const page = await browser.context.newPage();
      // Nothing the board loads may come from outside the service (a closed network would hang on it).
      const outside: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(open.url) && !r.url().startsWith('data:')) outside.push(r.url());
      });
      expect((await page.goto(`${open.url}/queues`))?.status()).toBe(200);
      // The queue cards in the main pane appear once the board's API answered (the menu comes first).
      for (const name of ['earthquake-windows', 'indicator-chunks', 'schedule-ticks']) {
        await page.locator('main').getByText(name, { exact: true }).waitFor({ timeout: 20_000 });
      }
      await page.screenshot({ path: join(packageRoot, 'test-results/queues.png') });
      expect(outside).toEqual([]);
      const pause = await page.request.put(`${open.url}/queues/api/queues/earthquake-windows/pause`);
      expect(pause.status()).toBe(405);
    } finally {
      await browser.close();
    }
  });

  it('the board page links nothing outside the service, and says so in its Content-Security-Policy', async () => {
    const r = await fetch(`${open.url}/queues`, { headers: { accept: 'text/html' } });
    const page = await r.text();
    expect(r.status).toBe(200);
    expect(page).not.toMatch(/https?:\/\//);
    expect(r.headers.get('content-security-policy')).toMatch(/^default-src 'self'/);
  });

  it('without DASHBOARD_TOKEN the board is open but refuses every action', async () => {
    expect((await fetch(`${open.url}/queues/api/queues?activeQueue=earthquake-windows`)).status).toBe(200);
    for (const [method, path] of [
      ['PUT', 'queues/earthquake-windows/pause'],
      ['PUT', 'queues/schedule-ticks/retry/failed'],
      ['PUT', 'queues/pause'],
      ['POST', 'queues/indicator-chunks/add'],
    ] as const) {
      const r = await fetch(`${open.url}/queues/api/${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect([path, r.status]).toEqual([path, 405]);
    }
    expect(await open.session.queues.earthquake.isPaused()).toBe(false);
  });

  it('with DASHBOARD_TOKEN the board and its actions need the token; the status page stays open', async () => {
    expect((await fetch(`${locked.url}/`)).status).toBe(200);
    const anonymous = await fetch(`${locked.url}/queues`, { headers: { accept: 'text/html' } });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toContain('name="token"');
    expect((await fetch(`${locked.url}/queues/api/queues`)).status).toBe(401);
    expect(
      (await fetch(`${locked.url}/queues`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status,
    ).toBe(401);
    expect((await fetch(`${locked.url}/queues?token=wrong-token`, { redirect: 'manual' })).status).toBe(401);

    const pauseUrl = `${locked.url}/queues/api/queues/earthquake-windows/pause`;
    expect((await fetch(pauseUrl, { method: 'PUT' })).status).toBe(401);
    expect(await locked.session.queues.earthquake.isPaused()).toBe(false);
    const signed = await fetch(pauseUrl, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(signed.status).toBe(200);
    expect(await locked.session.queues.earthquake.isPaused()).toBe(true);
    await fetch(`${locked.url}/queues/api/queues/earthquake-windows/resume`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(await locked.session.queues.earthquake.isPaused()).toBe(false);
  });

  it('?token= signs a browser in with a cookie and drops the token from the URL', async () => {
    const r = await fetch(`${locked.url}/queues/queue/schedule-ticks?token=${TOKEN}&status=latest`, {
      redirect: 'manual',
    });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/queues/queue/schedule-ticks?status=latest');
    const cookie = r.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^gateway_ingest_dashboard=[\w-]+; Path=\/queues; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(TOKEN);
    const jar = cookie.split(';')[0]!;
    expect((await fetch(`${locked.url}/queues/api/queues`, { headers: { cookie: jar } })).status).toBe(200);
  });

  it.skipIf(!HAS_CHROMIUM)(
    inBrowser('a browser signs in through the token form, then Bull Board and its actions work'),
    async () => {
      const browser = await launch();
      try {
        const page = await browser.context.newPage();
        expect((await page.goto(`${locked.url}/queues`))?.status()).toBe(401);
        await page.locator('input[name="token"]').fill(TOKEN);
        await page.locator('button[type="submit"]').click();
        await page.locator('main').getByText('schedule-ticks', { exact: true }).waitFor({ timeout: 20_000 });
        expect(page.url()).toBe(`${locked.url}/queues`);
        const pause = await page.request.put(`${locked.url}/queues/api/queues/indicator-chunks/pause`);
        expect(pause.status()).toBe(200);
        expect(await locked.session.queues.indicator.isPaused()).toBe(true);
        await page.request.put(`${locked.url}/queues/api/queues/indicator-chunks/resume`);
      } finally {
        await browser.close();
      }
    },
  );

  it('metrics: call latency, freshness per stream and the day budget left', async () => {
    const text = await (await fetch(`${open.url}/metrics`)).text();
    expect(
      sample(text, 'gateway_ingest_gateway_call_duration_seconds_count{operation="earthquake",error_kind="none"}'),
    ).toBeGreaterThan(0);
    expect(text).toMatch(
      /^gateway_ingest_gateway_call_duration_seconds_bucket\{le="0\.05",operation="earthquake",error_kind="none"\} \d+$/m,
    );
    const freshness = sample(text, 'gateway_ingest_stream_freshness_seconds{stream="earthquake:all"}');
    expect(freshness).toBeGreaterThanOrEqual(3_600 - 5);
    expect(freshness).toBeLessThan(3_600 + 600);
    const yearEnd = (Date.now() - Date.UTC(2017, 0, 1)) / 1000;
    expect(sample(text, `gateway_ingest_stream_freshness_seconds{stream="${RESOLVED_SERIES}"}`)).toBeCloseTo(
      yearEnd,
      -2,
    );

    const used = async () =>
      (await db.db.select().from(budgetCounters).where(eq(budgetCounters.scope, 'day')))[0]?.calls ?? 0;
    const before = await used();
    const left = sample(
      await (await fetch(`${open.url}/metrics`)).text(),
      'gateway_ingest_budget_billed_calls_left{scope="day"}',
    );
    const after = await used();
    expect(left).toBeLessThanOrEqual(CAP - before);
    expect(left).toBeGreaterThanOrEqual(CAP - after);
    // No cap, no series.
    expect(await (await fetch(`${locked.url}/metrics`)).text()).not.toContain(
      'gateway_ingest_budget_billed_calls_left{',
    );
  });
});

describe('dashboard: the board page template', () => {
  it('is written to a temporary folder of its own, which the process removes when it exits', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gi-board-tmp-'));
    try {
      // A process that builds the board and lists its temporary folder; the folder is listed again after it exits.
      const script =
        "const { readdirSync } = await import('node:fs'); const { tmpdir } = await import('node:os');" +
        "const { createBoard } = await import('./src/service/dashboard/board.ts');" +
        'createBoard({ queues: [], token: null }); console.log(readdirSync(tmpdir()).join(","));';
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: packageRoot,
        env: { ...process.env, TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      // tsx keeps a cache of its own there too.
      const boardViews = (names: string[]) => names.filter((n) => n.startsWith('gi-board-views-'));
      expect(boardViews(out.trim().split(','))).toHaveLength(1);
      expect(boardViews(readdirSync(tmp))).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
