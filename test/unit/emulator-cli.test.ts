import { describe, expect, it } from 'vitest';
import { emulatorCommand, parseEmulatorFlags } from '../../src/cli/commands/emulator.js';
import { UsageError } from '../../src/cli/exit.js';
import { bundledFixturePaths } from '../../src/emulator/fixtures.js';

const parse = (raw: Parameters<typeof parseEmulatorFlags>[0], env: NodeJS.ProcessEnv = {}) => parseEmulatorFlags(raw, env);

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('emulator command flags', () => {
  it('takes the key from --key or MARKET_KEY, and requires one', () => {
    expect(parse({ key: 'k1' }).key).toBe('k1');
    expect(parse({}, { MARKET_KEY: 'k2' }).key).toBe('k2');
    expect(usageError(() => parse({}, { MARKET_KEY: '' }))).toMatch(/--key/);
  });

  it('parses every flag', () => {
    const files = bundledFixturePaths();
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

  it('never echoes the key in a usage error or the help', () => {
    const secret = 'sekrit-123';
    expect(usageError(() => parse({ key: secret, port: 'x' }))).not.toContain(secret);
    expect(emulatorCommand().helpInformation()).not.toContain(secret);
  });

  it('registers as "emulator" with every documented flag', () => {
    const cmd = emulatorCommand();
    expect(cmd.name()).toBe('emulator');
    const flags = cmd.options.map((o) => o.long);
    for (const f of ['--port', '--key', '--catalog', '--tile-from', '--tile-to', '--indicators', '--order', '--latency-ms', '--fault', '--seed']) {
      expect(flags).toContain(f);
    }
  });
});
