import { afterEach, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { bundledDataPaths } from '../src/bundled-data.js';
import { emulatorCommand, parseEmulatorArgs, serveUntilSignal } from '../src/cli.js';
import { EmulatorUsageError } from '../src/spec.js';
import { waitFor } from '../../../test/support/wait.js';

type Raw = Record<string, string | string[] | boolean | undefined>;

/** `{ tileFrom: 'x', catalog: ['a', 'b'], exclusiveEnd: true }` -> `--tile-from x --catalog a --catalog b --exclusive-end`. */
function argv(raw: Raw): string[] {
  return Object.entries(raw).flatMap(([name, value]) => {
    const flag = `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    if (value === undefined || value === false) return [];
    if (value === true) return [flag];
    return (Array.isArray(value) ? value : [value]).flatMap((v) => [flag, v]);
  });
}

const parse = (raw: Raw, env: NodeJS.ProcessEnv = {}) => parseEmulatorArgs(argv(raw), env);

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EmulatorUsageError);
    return (err as Error).message;
  }
  throw new Error('expected an EmulatorUsageError');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('emulator command flags', () => {
  it('takes the key from --key or MARKET_KEY, and requires one', () => {
    expect(parse({ key: 'k1' }).key).toBe('k1');
    expect(parse({}, { MARKET_KEY: 'k2' }).key).toBe('k2');
    expect(usageError(() => parse({}, { MARKET_KEY: '' }))).toMatch(/--key/);
  });

  it('parses every flag', () => {
    const files = bundledDataPaths();
    expect(
      parse({
        key: 'k',
        port: '8787',
        host: '127.0.0.1',
        catalog: files.earthquakeFiles,
        indicators: files.indicatorFiles,
        tileFrom: '2015-01-01T00:00:00Z',
        tileTo: '2025-01-01T00:00:00Z',
        order: 'random',
        latencyMs: '250',
        fault: ['server_error=0.1', 'connection_reset=1'],
        seed: '7',
        emptyAs: 'null',
        retryAfter: '3',
        mixedRandomRatio: '0.5',
        timePrecision: 'second',
        exclusiveStart: true,
        exclusiveEnd: true,
        ignoreFractionalSeconds: true,
        silentCap: '100',
        swarm: ['2025-08-20T12:00:00Z:250:world', '2025-08-21T09:00:00+09:00:10', '2025-08-22T00:00:00Z:1:place'],
      }),
    ).toEqual({
      key: 'k',
      port: 8787,
      host: '127.0.0.1',
      earthquakeFiles: files.earthquakeFiles,
      indicatorFiles: files.indicatorFiles,
      tile: { from: new Date('2015-01-01T00:00:00Z'), to: new Date('2025-01-01T00:00:00Z') },
      order: 'random',
      latencyMs: 250,
      faults: [
        { kind: 'server_error', probability: 0.1 },
        { kind: 'connection_reset', probability: 1 },
      ],
      seed: 7,
      emptyAs: 'null',
      retryAfterSeconds: 3,
      mixedRandomRatio: 0.5,
      timePrecision: 'second',
      startBoundary: 'exclusive',
      endBoundary: 'exclusive',
      ignoreFractionalSeconds: true,
      silentCap: 100,
      swarms: [
        { at: new Date('2025-08-20T12:00:00Z'), count: 250, spread: 'world' },
        { at: new Date('2025-08-21T00:00:00Z'), count: 10, spread: 'place' },
        { at: new Date('2025-08-22T00:00:00Z'), count: 1, spread: 'place' },
      ],
    });
  });

  it('names the flag and the value of every bad input', () => {
    expect(usageError(() => parse({ key: 'k', port: '70000' }))).toMatch(/--port.*70000/);
    expect(usageError(() => parse({ key: 'k', port: '-1' }))).toMatch(/--port/);
    expect(usageError(() => parse({ key: 'k', order: 'sideways' }))).toMatch(/--order.*sideways/);
    expect(usageError(() => parse({ key: 'k', latencyMs: 'soon' }))).toMatch(/--latency-ms.*soon/);
    expect(usageError(() => parse({ key: 'k', fault: ['meteor=0.5'] }))).toMatch(/--fault.*meteor/);
    expect(usageError(() => parse({ key: 'k', fault: ['server_error=2'] }))).toMatch(/--fault.*server_error=2/);
    expect(usageError(() => parse({ key: 'k', fault: ['server_error'] }))).toMatch(/--fault/);
    expect(usageError(() => parse({ key: 'k', seed: 'x' }))).toMatch(/--seed/);
    expect(usageError(() => parse({ key: 'k', catalog: ['/no/such.csv'] }))).toMatch(/--catalog.*\/no\/such\.csv/);
    expect(usageError(() => parse({ key: 'k', indicators: ['/no/such.csv'] }))).toMatch(/--indicators/);
    expect(usageError(() => parse({ key: 'k', tileFrom: '2020-01-01T00:00:00Z' }))).toMatch(/--tile-to/);
    expect(usageError(() => parse({ key: 'k', tileFrom: 'yesterday', tileTo: '2020-01-01T00:00:00Z' }))).toMatch(
      /--tile-from.*yesterday/,
    );
    expect(
      usageError(() => parse({ key: 'k', tileFrom: '2021-01-01T00:00:00Z', tileTo: '2020-01-01T00:00:00Z' })),
    ).toMatch(/--tile-to/);
    expect(usageError(() => parse({ key: 'k', emptyAs: 'nothing' }))).toMatch(/--empty-as/);
  });

  it('parses the new orders and leaves the answer knobs unset by default', () => {
    expect(parse({ key: 'k', order: 'magnitude' }).order).toBe('magnitude');
    expect(parse({ key: 'k', order: 'mixed' }).order).toBe('mixed');
    for (const order of ['id', 'id-desc', 'newest-swap', 'depth']) expect(parse({ key: 'k', order }).order).toBe(order);
    expect(parse({ key: 'k' })).toEqual({ key: 'k' });
    expect(parse({ key: 'k', timePrecision: 'ms', exclusiveStart: false }).timePrecision).toBe('ms');
  });

  it('names the flag and the value of every bad answer knob', () => {
    expect(usageError(() => parse({ key: 'k', mixedRandomRatio: '1.5' }))).toMatch(/--mixed-random-ratio.*1\.5/);
    expect(usageError(() => parse({ key: 'k', mixedRandomRatio: 'half' }))).toMatch(/--mixed-random-ratio.*half/);
    expect(usageError(() => parse({ key: 'k', timePrecision: 'fortnight' }))).toMatch(/--time-precision.*fortnight/);
    expect(parse({ key: 'k', timePrecision: 'minute' }).timePrecision).toBe('minute');
    expect(usageError(() => parse({ key: 'k', silentCap: '0' }))).toMatch(/--silent-cap.*'0'/);
    expect(usageError(() => parse({ key: 'k', silentCap: '201' }))).toMatch(/--silent-cap.*201/);
    expect(usageError(() => parse({ key: 'k', silentCap: 'ten' }))).toMatch(/--silent-cap.*ten/);
    for (const bad of [
      '2025-08-20T12:00:00Z',
      '2025-08-20T12:00:00Z:0',
      '2025-08-20T12:00:00Z:1001',
      'noon:5',
      '2025-08-20T12:00:00Z:5:moon',
      '2025-08-20T12:00:00.5Z:5',
    ]) {
      expect(usageError(() => parse({ key: 'k', swarm: [bad] }))).toMatch(/--swarm/);
    }
    expect(
      usageError(() => parse({ key: 'k', swarm: ['2025-08-20T12:00:00Z:5', '2025-08-20T12:00:00Z:6:world'] })),
    ).toMatch(/--swarm/);
  });

  it('parses --live rates, tick and window', () => {
    expect(parse({ key: 'k', live: 'add=600,revise=300,delete=120' }).live).toEqual({
      addPerMinute: 600,
      revisePerMinute: 300,
      deletePerMinute: 120,
    });
    expect(
      parse({
        key: 'k',
        live: 'delete=0.5, add=2,tick-ms=250',
        liveFrom: '2025-09-01T00:00:00Z',
        liveTo: '2025-09-03T00:00:00+02:00',
      }).live,
    ).toEqual({
      addPerMinute: 2,
      revisePerMinute: 0,
      deletePerMinute: 0.5,
      tickMs: 250,
      window: { from: new Date('2025-09-01T00:00:00Z'), to: new Date('2025-09-02T22:00:00Z') },
    });
  });

  it('names the flag and the value of every bad --live input', () => {
    for (const bad of ['add=-1', 'add=x', 'add', 'grow=5', 'toString=5', 'add=1,add=2', 'add=2000000', 'add=1=2', '']) {
      expect(usageError(() => parse({ key: 'k', live: bad }))).toMatch(/--live/);
    }
    expect(usageError(() => parse({ key: 'k', live: 'add=1,tick-ms=5' }))).toMatch(/--live.*tick-ms=5.*from 10/);
    expect(
      usageError(() => parse({ key: 'k', liveFrom: '2025-09-01T00:00:00Z', liveTo: '2025-09-02T00:00:00Z' })),
    ).toMatch(/need --live/);
    expect(usageError(() => parse({ key: 'k', live: 'add=1', liveFrom: '2025-09-01T00:00:00Z' }))).toMatch(
      /both or neither/,
    );
    expect(
      usageError(() => parse({ key: 'k', live: 'add=1', liveFrom: 'soon', liveTo: '2025-09-02T00:00:00Z' })),
    ).toMatch(/--live-from.*soon/);
    expect(
      usageError(() =>
        parse({ key: 'k', live: 'add=1', liveFrom: '2025-09-03T00:00:00Z', liveTo: '2025-09-02T00:00:00Z' }),
      ),
    ).toMatch(/--live-to/);
    expect(
      usageError(() =>
        parse({ key: 'k', live: 'add=1', tileFrom: '2015-01-01T00:00:00Z', tileTo: '2025-01-01T00:00:00Z' }),
      ),
    ).toMatch(/--live.*cannot be used with.*--tile/);
  });

  it('serves a live catalog until a signal and prints what changed', async () => {
    const aug = bundledDataPaths().earthquakeFiles.filter((f) => f.includes('2025-08-19'));
    const options = parse({ key: 'k', catalog: aug, indicators: [], live: 'add=60000,revise=6000,tick-ms=10' });
    let text = '';
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    });
    // The live timer on a clock of the test's own: 100 ms of it is ten ticks, however slow the machine.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const served = serveUntilSignal(options, out);
    await waitFor(async () => text.includes('listening'), 10_000, 'the emulator to listen', 10);
    vi.advanceTimersByTime(100);
    process.emit('SIGINT');
    await served;
    expect(text).toMatch(/live catalog: per minute 60000 added, 6000 revised, 0 deleted\n/);
    expect(text).toMatch(/live catalog: 100 added, 10 revised, 0 deleted\n$/);
  });

  it('never echoes the key in a usage error or the help', () => {
    const secret = 'sekrit-123';
    expect(usageError(() => parse({ key: secret, port: 'x' }))).not.toContain(secret);
    expect(emulatorCommand().helpInformation()).not.toContain(secret);
  });

  it('registers as "emulator" with every documented flag', () => {
    const cmd = emulatorCommand();
    expect(cmd.name()).toBe('emulator');
    const flags = cmd.options.map((o) => o.long);
    for (const f of [
      '--port',
      '--key',
      '--catalog',
      '--tile-from',
      '--tile-to',
      '--indicators',
      '--order',
      '--latency-ms',
      '--fault',
      '--seed',
      '--mixed-random-ratio',
      '--time-precision',
      '--exclusive-start',
      '--exclusive-end',
      '--ignore-fractional-seconds',
      '--silent-cap',
      '--swarm',
      '--live',
      '--live-from',
      '--live-to',
    ]) {
      expect(flags).toContain(f);
    }
    expect(cmd.options.find((o) => o.long === '--swarm')?.variadic).toBe(true);
    expect(cmd.options.find((o) => o.long === '--fault')?.variadic).toBe(true);
    const help = cmd.helpInformation();
    for (const word of ['magnitude', 'mixed', '--swarm', '--silent-cap', '--live', 'revise=', 'null'])
      expect(help).toContain(word);
    for (const order of ['id-desc', 'newest-swap', 'depth']) expect(help).toContain(order);
  });
});
