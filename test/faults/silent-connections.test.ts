/**
 * PostgreSQL or Redis connections that go silent mid-backfill: no reset, no close, bytes sent are
 * never answered, while new connections work. A dead network path, a frozen load balancer or a
 * peer that stopped reading looks like this, and nothing in a client notices it unless it bounds
 * its own waits: the pipeline must destroy what stays silent, carry on over new connections, say
 * what it waits for, and still stop when told. The pipeline reaches the service through a proxy
 * that silences its connections; the test's own connection goes straight to the server.
 */
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliProcess } from '../support/run-cli.js';
import type { Disruption } from './support/disruptions.js';
import { pollUntil } from './support/host.js';
import { openScenario, suiteFixture, type Scenario, type Services } from './support/scenario.js';
import { startSilenceProxy, type SilenceProxy } from './support/silence-proxy.js';
import { verdict } from './support/verdict.js';
import { callsReach, exitWithin, exited, expectReturns0, tail, whereItStands, type Exit } from './support/waiting.js';

/**
 * Each window's calls one after another (WINDOW_LANES=1) at this latency: the month takes about
 * 22 s of calls, so a stall at call 10 (about 4 s in) leaves most of it to do after the stall.
 */
const LATENCY_MS = 300;
const STALL_AT_CALL = 10;
/** The pipeline's defaults: the scenarios show that they are enough. */
const DB_SILENCE_TIMEOUT_MS = 15_000;
const REDIS_SILENCE_TIMEOUT_MS = 15_000;
/** From the stall to the backfill's own exit: the silence timeout, the jobs put back, the rest of the month. */
const FINISH_AFTER_STALL_MS = 60_000;
/** From the last window done in PostgreSQL to the exit: the wait's next poll and every close bounded. */
const EXIT_AFTER_DONE_MS = 10_000;
const SILENCE_ALL_MS = 20_000;
/** After a whole silence healed: retries that backed off during it come round, then the rest of the month. */
const FINISH_AFTER_HEAL_MS = 60_000;
const SHUTDOWN_DEADLINE_MS = 5_000;
/** A process past its deadline is watched this much longer, so that a failure says how late it was. */
const OVERTIME_MS = 15_000;
const RERUN_DEADLINE_MS = 90_000;
/** No call started for this long: the backfill waits on the silent database (each call writes its audit row first). */
const STALLED_AFTER_MS = LATENCY_MS * 5;

type Service = 'postgres' | 'redis';

/**
 * What a test opened, closed in the order it was opened whatever the test did, so that no process,
 * server or socket outlives it: a scenario's processes are killed before its proxy goes.
 */
let cleanup: Array<() => Promise<void>> = [];

afterEach(async () => {
  const steps = cleanup;
  cleanup = [];
  for (const step of steps) {
    await step().catch((e: unknown) => void process.stdout.write(`[faults] cleanup: ${String(e)}\n`));
  }
});

/** The environment that sends the pipeline's `service` connections through the proxy. */
function throughProxy(s: Scenario, service: Service, proxy: SilenceProxy): Record<string, string> {
  if (service === 'redis') return { REDIS_URL: `redis://127.0.0.1:${proxy.port}/0` };
  const url = new URL(s.dbUrl);
  url.port = String(proxy.port);
  return { DATABASE_URL: url.toString() };
}

interface Silent {
  s: Scenario;
  proxy: SilenceProxy;
  /** `backfill earthquakes --wait --inline` through the proxy, `extra` added to its environment. */
  inline: (label: string, extra?: Record<string, string>) => CliProcess;
}

async function openSilent(name: string, service: Service, services: Services): Promise<Silent> {
  const s = await openScenario({
    name,
    services,
    latencyMs: LATENCY_MS,
    env: {
      WINDOW_LANES: '1',
      SHUTDOWN_DEADLINE_MS: String(SHUTDOWN_DEADLINE_MS),
      DB_SILENCE_TIMEOUT_MS: String(DB_SILENCE_TIMEOUT_MS),
      REDIS_SILENCE_TIMEOUT_MS: String(REDIS_SILENCE_TIMEOUT_MS),
    },
  });
  cleanup.push(() => s.finish());
  const proxy = await startSilenceProxy(service === 'postgres' ? services.pg.port : services.redis.port);
  cleanup.push(() => proxy.close());
  const inline = (label: string, extra: Record<string, string> = {}) =>
    s.backfill(label, ['--wait', '--inline'], { ...throughProxy(s, service, proxy), ...extra });
  return { s, proxy, inline };
}

type Clock = (text: string) => number | null;

/**
 * When a line containing `text` first came on the process's stderr (wall clock), null until then.
 * The CLI's own log lines carry no time, so the test stamps them as they come.
 */
function stderrClock(p: CliProcess, texts: readonly string[]): Clock {
  const seen = new Map<string, number>();
  let buffered = '';
  p.child.stderr?.on('data', (chunk: Buffer) => {
    buffered = (buffered + chunk.toString()).slice(-4_096);
    for (const t of texts) if (!seen.has(t) && buffered.includes(t)) seen.set(t, Date.now());
  });
  return (text) => seen.get(text) ?? null;
}

/** Until the gateway has seen STALL_AT_CALL calls: the moment a stall lands mid-backfill. */
async function reachStall(s: Scenario, p: CliProcess, problems: string[]): Promise<void> {
  if (await callsReach(s, STALL_AT_CALL, 60_000, () => exited(p))) return;
  const how = exited(p) ? 'ended' : 'stalled';
  problems.push(`harness: the backfill made ${s.emulator.calls.length} calls and ${how} before call ${STALL_AT_CALL}`);
}

/** Silences every connection open now; returns when, for the scenario's disruptions. */
function silenceOpen(s: Scenario, service: Service, proxy: SilenceProxy): number {
  const { open } = proxy.counts();
  proxy.silenceOpen();
  s.note(`${service}: ${open} open connections silenced after ${s.emulator.calls.length} calls`);
  return Date.now();
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Waits for the process until `deadline` (wall clock), then OVERTIME_MS longer, so that a failure
 * says how late it was; kills it after that. Null when it had to be killed.
 */
async function exitBy(
  s: Scenario,
  p: CliProcess,
  label: string,
  deadline: number,
  problems: string[],
): Promise<Exit | null> {
  const exit = await exitWithin(p, Math.max(0, deadline - Date.now()) + OVERTIME_MS);
  const late = seconds(Date.now() - deadline);
  if (exit === null) {
    const where = await whereItStands(s);
    problems.push(`${label} still running ${late} past its deadline (${s.elapsed()}); ${where}; last: ${tail(p)}`);
    s.note(`${label}: still running ${late} past its deadline, killed`);
    p.child.kill('SIGKILL');
    await p.exited;
  } else if (Date.now() > deadline) {
    problems.push(`${label} exited ${late} past its deadline (${s.elapsed()})`);
  }
  return exit;
}

function expectCode0(exit: Exit | null, p: CliProcess, label: string, problems: string[]): void {
  if (exit === null || exit.code === 0) return;
  problems.push(`${label} exited ${exit.signal ?? `code ${exit.code}`}: ${tail(p)}`);
}

/** What `--wait` said of the stalled service, and when; with `problems`, it must have said that it waits for it. */
function noteSaid(s: Scenario, seen: Clock, name: string, from: number, problems: string[] | null): void {
  const [lost, back] = [`${name} does not answer`, `${name} answers again`];
  const when = (text: string) => {
    const at = seen(text);
    return at === null ? 'never' : `${seconds(at - from)} after the stall`;
  };
  s.note(`stderr: "${lost}" ${when(lost)}, "${back}" ${when(back)}`);
  if (problems !== null && seen(lost) === null) problems.push(`stderr never said "${lost}"`);
}

/** A process the harness had to kill leaves rows unfinished: the silence made that so, not a bug of the audit. */
function killedBy(exit: Exit | null, from: number): Disruption[] {
  return exit === null ? [{ kind: 'kill', from, to: Date.now() }] : [];
}

describe('the silence proxy', () => {
  /** An echo server; its sockets are at hand, so that the test can send from the server's side too. */
  async function echoServer(): Promise<{ port: number; sockets: Socket[]; close(): Promise<void> }> {
    const sockets: Socket[] = [];
    const server = createServer((c) => {
      sockets.push(c);
      c.on('error', () => undefined);
      c.pipe(c);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return {
      port: (server.address() as AddressInfo).port,
      sockets,
      close: () => {
        for (const c of sockets) c.destroy();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }

  /** A client that keeps what it reads, and whether it was ended or reset. */
  async function client(port: number): Promise<{ socket: Socket; got(): string; closed(): boolean }> {
    const socket = connect({ host: '127.0.0.1', port });
    let got = '';
    let closed = false;
    socket.on('data', (c: Buffer) => (got += c.toString()));
    socket.on('error', () => undefined);
    socket.on('end', () => (closed = true));
    socket.on('close', () => (closed = true));
    await once(socket, 'connect');
    return { socket, got: () => got, closed: () => closed };
  }

  const reads = (c: { got(): string }, text: string, ms = 2_000) =>
    pollUntil(async () => c.got().includes(text), ms, 10);

  it('passes bytes, silences open connections, lets new ones through, heals after silenceAll', async () => {
    const echo = await echoServer();
    cleanup.push(() => echo.close());
    const proxy = await startSilenceProxy(echo.port);
    cleanup.push(() => proxy.close());

    const a = await client(proxy.port);
    a.socket.write('a1;');
    expect(await reads(a, 'a1;')).toBe(true);

    proxy.silenceOpen();
    a.socket.write('a2;');
    // The server's own bytes do not reach the client either.
    await pollUntil(async () => echo.sockets.length === 1, 2_000, 10);
    echo.sockets[0]?.write('from-server;');
    const b = await client(proxy.port);
    b.socket.write('b1;');
    expect(await reads(b, 'b1;')).toBe(true);
    // Both ways, what the silenced connection sent reached the proxy and went no further.
    const dropped = 'a2;'.length + 'from-server;'.length;
    expect(await pollUntil(async () => proxy.bytes().dropped >= dropped, 2_000, 10)).toBe(true);
    expect(a.got()).toBe('a1;');
    expect(proxy.counts()).toEqual({ open: 2, silenced: 1 });

    const silenceAt = Date.now();
    proxy.silenceAll(800);
    b.socket.write('b2;');
    const c = await client(proxy.port);
    c.socket.write('c1;');
    c.socket.write('c2;');
    const held = 'b2;c1;c2;'.length;
    expect(await pollUntil(async () => proxy.bytes().held >= held, 2_000, 10)).toBe(true);
    expect([b.got(), c.got()]).toEqual(['b1;', '']);
    expect(await reads(c, 'c1;c2;', 3_000)).toBe(true);
    expect(Date.now() - silenceAt).toBeGreaterThanOrEqual(750);
    expect(await reads(b, 'b1;b2;', 500)).toBe(true);

    // Healed: bytes pass at once again; the silenced connection stays silent and open.
    b.socket.write('b3;');
    expect(await reads(b, 'b3;', 500)).toBe(true);
    a.socket.write('a3;');
    expect(await pollUntil(async () => proxy.bytes().dropped >= dropped + 'a3;'.length, 2_000, 10)).toBe(true);
    expect([a.got(), a.closed()]).toEqual(['a1;', false]);

    // A client that ends its connection while it is held: its bytes first, then its end.
    proxy.silenceAll(300);
    c.socket.end('c3;');
    await pollUntil(async () => c.closed(), 3_000, 10);
    expect(c.got()).toBe('c1;c2;c3;');

    await proxy.close();
    expect(await pollUntil(async () => a.closed() && b.closed(), 2_000, 10)).toBe(true);
  });
});

describe('silent PostgreSQL and Redis connections mid-backfill, new connections working', () => {
  const fixture = suiteFixture();
  const INLINE = 'backfill --wait --inline';

  it('PostgreSQL goes silent: the same inline backfill finishes by itself within 60 s, saying so', async () => {
    const { s, proxy, inline } = await openSilent('silent-postgres', 'postgres', fixture.services);
    const problems: string[] = [];
    const p = inline('backfill-inline');
    const seen = stderrClock(p, ['PostgreSQL does not answer', 'PostgreSQL answers again']);
    await reachStall(s, p, problems);
    const silenceAt = silenceOpen(s, 'postgres', proxy);
    const exit = await exitBy(s, p, INLINE, silenceAt + FINISH_AFTER_STALL_MS, problems);
    expectCode0(exit, p, INLINE, problems);
    noteSaid(s, seen, 'PostgreSQL', silenceAt, problems);
    // A call in flight at the stall may be asked again once the silent connection is given up.
    const stall: Disruption = { kind: 'outage', from: silenceAt, to: silenceAt + DB_SILENCE_TIMEOUT_MS };
    const v = await verdict(s, fixture.catalog, { disruptions: [stall, ...killedBy(exit, silenceAt)], problems });
    expect(v.problems).toEqual([]);
  }, 150_000);

  it('Redis goes silent: the same inline backfill finishes, exit 0 within 10 s of its last window done', async () => {
    const { s, proxy, inline } = await openSilent('silent-redis', 'redis', fixture.services);
    const problems: string[] = [];
    const p = inline('backfill-inline');
    const seen = stderrClock(p, ['Redis does not answer', 'Redis answers again']);
    await reachStall(s, p, problems);
    const silenceAt = silenceOpen(s, 'redis', proxy);
    // The last window done is read from PostgreSQL, which the stall does not touch.
    const allDone = async () => {
      const parts = await s.partitions();
      return parts.length > 0 && parts.every((x) => x.state === 'done') ? Date.now() : null;
    };
    const doneAt = await pollUntil(allDone, Math.max(0, silenceAt + FINISH_AFTER_STALL_MS - Date.now()), 100);
    if (doneAt === null) {
      const where = await whereItStands(s);
      problems.push(`the windows were not all done ${seconds(FINISH_AFTER_STALL_MS)} after the stall; ${where}`);
    } else s.note('every window done in PostgreSQL');
    const exit = await exitBy(s, p, INLINE, (doneAt ?? Date.now()) + EXIT_AFTER_DONE_MS, problems);
    if (exit !== null && doneAt !== null) s.note(`exited ${seconds(Date.now() - doneAt)} after the last window done`);
    expectCode0(exit, p, INLINE, problems);
    noteSaid(s, seen, 'Redis', silenceAt, problems);
    const stall: Disruption = { kind: 'outage', from: silenceAt, to: silenceAt + REDIS_SILENCE_TIMEOUT_MS };
    const v = await verdict(s, fixture.catalog, { disruptions: [stall, ...killedBy(exit, silenceAt)], problems });
    expect(v.problems).toEqual([]);
  }, 150_000);

  it('all PostgreSQL connections silent 20 s, then healed: finishes, exit 0, paid twice only in flight', async () => {
    const { s, proxy, inline } = await openSilent('silent-postgres-20s-healed', 'postgres', fixture.services);
    const problems: string[] = [];
    const p = inline('backfill-inline');
    const seen = stderrClock(p, ['PostgreSQL does not answer', 'PostgreSQL answers again']);
    await reachStall(s, p, problems);
    const silenceAt = Date.now();
    proxy.silenceAll(SILENCE_ALL_MS);
    s.note(`postgres: every connection silent for ${seconds(SILENCE_ALL_MS)} after ${s.emulator.calls.length} calls`);
    const healAt = silenceAt + SILENCE_ALL_MS;
    const exit = await exitBy(s, p, INLINE, healAt + FINISH_AFTER_HEAL_MS, problems);
    expectCode0(exit, p, INLINE, problems);
    noteSaid(s, seen, 'PostgreSQL', silenceAt, null);
    // Only calls caught between their request and their commit by the silence may be paid again.
    const silence: Disruption = { kind: 'outage', from: silenceAt, to: healAt };
    const v = await verdict(s, fixture.catalog, { disruptions: [silence, ...killedBy(exit, silenceAt)], problems });
    expect(v.problems).toEqual([]);
  }, 150_000);

  it('SIGTERM while PostgreSQL is silent: exits within SHUTDOWN_DEADLINE_MS + 5 s; a re-run completes', async () => {
    const { s, proxy, inline } = await openSilent('silent-postgres-sigterm', 'postgres', fixture.services);
    const problems: string[] = [];
    const p = inline('backfill-inline');
    await reachStall(s, p, problems);
    const silenceAt = silenceOpen(s, 'postgres', proxy);
    // Stalled once no call has started for a while: every call writes its audit row first, which now hangs.
    const lastStart = () => Math.max(s.proxy.calls.at(-1)?.arrivedAt ?? 0, silenceAt);
    if (!(await pollUntil(async () => Date.now() - lastStart() >= STALLED_AFTER_MS, 10_000, 50))) {
      problems.push(`harness: calls went on for 10 s after the silence (${s.emulator.calls.length} calls)`);
    }
    const signalledAt = Date.now();
    p.child.kill('SIGTERM');
    s.note(`backfill-inline: SIGTERM ${seconds(signalledAt - silenceAt)} into the silence`);
    const label = `${INLINE} after SIGTERM`;
    const exit = await exitBy(s, p, label, signalledAt + SHUTDOWN_DEADLINE_MS + 5_000, problems);
    const how = exit === null ? null : (exit.signal ?? `code ${exit.code}`);
    if (how !== null) s.note(`exited ${how} ${seconds(Date.now() - signalledAt)} after SIGTERM`);
    // Ended by its own hand, not by the signal's default action (which skips every close).
    if (exit?.signal) problems.push(`${label}: died of ${exit.signal} instead of stopping: ${tail(p)}`);
    // What the silence caught could not be recorded and the process left without it: a kill, in effect.
    const stopped: Disruption = { kind: 'kill', from: silenceAt, to: Date.now() };
    // The usual end check wants the month done: the same command again, over new connections.
    const rerun = inline('backfill-rerun');
    await expectReturns0(s, rerun, `the re-run ${INLINE}`, RERUN_DEADLINE_MS, problems);
    const v = await verdict(s, fixture.catalog, { disruptions: [stopped], problems });
    expect(v.problems).toEqual([]);
  }, 180_000);
});
