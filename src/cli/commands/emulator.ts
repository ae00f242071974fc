import { statSync } from 'node:fs';
import { Command } from 'commander';
import { EmulatorDataError } from '../../emulator/data-error.js';
import { FAULT_KINDS, isFaultKind, type FaultRule } from '../../emulator/faults.js';
import { EVENT_ORDERS, type EventOrder } from '../../emulator/selection.js';
import { startEmulator } from '../../emulator/server.js';
import type { EmulatorOptions } from '../../emulator/types.js';
import { isRfc3339 } from '../../gateway/time.js';
import { UsageError } from '../exit.js';

/** Flags as commander hands them over: strings, and string lists for the repeatable ones. */
export interface RawEmulatorFlags {
  port?: string;
  host?: string;
  key?: string;
  catalog?: string[];
  tileFrom?: string;
  tileTo?: string;
  indicators?: string[];
  order?: string;
  latencyMs?: string;
  fault?: string[];
  seed?: string;
  emptyAs?: string;
  retryAfter?: string;
}

function wholeNumber(flag: string, value: string, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n <= max)) throw new UsageError(`${flag}: expected a whole number from 0 to ${max}, got "${value}"`);
  return n;
}

function existingFiles(flag: string, paths: string[]): string[] {
  for (const p of paths) {
    let isFile = false;
    try {
      isFile = statSync(p).isFile();
    } catch {
      // Reported below with the flag's name, which says more than ENOENT does.
    }
    if (!isFile) throw new UsageError(`${flag}: no such file "${p}"`);
  }
  return paths;
}

function timestamp(flag: string, value: string): Date {
  if (!isRfc3339(value)) throw new UsageError(`${flag}: expected an RFC 3339 timestamp, got "${value}"`);
  return new Date(value);
}

function faultRule(value: string): FaultRule {
  const [kind = '', probability = '', ...extra] = value.split('=');
  if (extra.length > 0 || !isFaultKind(kind)) {
    throw new UsageError(`--fault: expected KIND=PROBABILITY with KIND one of ${FAULT_KINDS.join(', ')}, got "${value}"`);
  }
  const p = /^(\d+\.?\d*|\.\d+)$/.test(probability) ? Number(probability) : Number.NaN;
  if (!(p >= 0 && p <= 1)) throw new UsageError(`--fault: probability must be from 0 to 1, got "${value}"`);
  return { kind, probability: p };
}

/** Flags (and MARKET_KEY) -> emulator options; every bad value is a UsageError naming its flag. */
export function parseEmulatorFlags(raw: RawEmulatorFlags, env: NodeJS.ProcessEnv): EmulatorOptions {
  // An empty MARKET_KEY counts as unset, as it does in src/config/env.ts.
  const key = raw.key ?? (env['MARKET_KEY'] || undefined);
  if (key === undefined || key === '') throw new UsageError('--key: required (or set MARKET_KEY)');
  const options: EmulatorOptions = { key };
  if (raw.port !== undefined) options.port = wholeNumber('--port', raw.port, 65_535);
  if (raw.host !== undefined) {
    if (raw.host.trim() === '') throw new UsageError('--host: must not be empty');
    options.host = raw.host;
  }
  if (raw.catalog) options.earthquakeFiles = existingFiles('--catalog', raw.catalog);
  if (raw.indicators) options.indicatorFiles = existingFiles('--indicators', raw.indicators);
  if ((raw.tileFrom === undefined) !== (raw.tileTo === undefined)) {
    throw new UsageError('--tile-from and --tile-to: give both or neither');
  }
  if (raw.tileFrom !== undefined && raw.tileTo !== undefined) {
    const from = timestamp('--tile-from', raw.tileFrom);
    const to = timestamp('--tile-to', raw.tileTo);
    if (from > to) throw new UsageError(`--tile-to: "${raw.tileTo}" is before --tile-from "${raw.tileFrom}"`);
    options.tile = { from, to };
  }
  if (raw.order !== undefined) {
    if (!(EVENT_ORDERS as readonly string[]).includes(raw.order)) {
      throw new UsageError(`--order: expected one of ${EVENT_ORDERS.join(', ')}, got "${raw.order}"`);
    }
    options.order = raw.order as EventOrder;
  }
  if (raw.latencyMs !== undefined) options.latencyMs = wholeNumber('--latency-ms', raw.latencyMs, 600_000);
  if (raw.fault) options.faults = raw.fault.map(faultRule);
  if (raw.seed !== undefined) options.seed = wholeNumber('--seed', raw.seed, 2 ** 32 - 1);
  if (raw.emptyAs !== undefined) {
    if (raw.emptyAs !== 'array' && raw.emptyAs !== 'null') {
      throw new UsageError(`--empty-as: expected array or null, got "${raw.emptyAs}"`);
    }
    options.emptyAs = raw.emptyAs;
  }
  if (raw.retryAfter !== undefined) options.retryAfterSeconds = wholeNumber('--retry-after', raw.retryAfter, 86_400);
  return options;
}

/** Runs until SIGINT or SIGTERM. Prints the base URL, never the key. */
export async function serveUntilSignal(options: EmulatorOptions, out: NodeJS.WritableStream): Promise<void> {
  let emulator;
  try {
    emulator = await startEmulator(options);
  } catch (err) {
    // A data file that does not parse is bad input from the command line, hence exit 2.
    if (err instanceof EmulatorDataError) throw new UsageError(err.message);
    throw err;
  }
  out.write(`gateway emulator listening on ${emulator.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await emulator.close();
}

const HELP_AFTER = `
Serves POST {url}/v1/gateway/earthquake-standard/v1/earthquake-queries and
POST {url}/v1/gateway/economic-indicator-standard/v1/economic-indicator-queries
from real USGS and World Bank files (default: the bundled test/fixtures files).

Fault kinds for --fault: ${FAULT_KINDS.join(', ')}.
Faults only hit requests that are authorized and valid, i.e. would otherwise succeed.

Examples:
  MARKET_KEY=dev gateway-ingest emulator --port 8787
  gateway-ingest emulator --key dev --order random --seed 7 --fault rate_limited=0.1 --fault server_error=0.05
  gateway-ingest emulator --key dev --tile-from 2015-01-01T00:00:00Z --tile-to 2025-01-01T00:00:00Z
`;

export function emulatorCommand(): Command {
  return new Command('emulator')
    .description('run a local gateway emulator (earthquake and economic indicator queries) for tests, demos and benchmarks')
    .option('--port <port>', 'TCP port; 0 picks a free one (default: 0)')
    .option('--host <host>', 'address to bind (default: 127.0.0.1)')
    .option('--key <key>', 'the credential the emulator accepts (default: $MARKET_KEY; prefer the variable, flags show up in ps)')
    .option('--catalog <file...>', 'USGS CSV or GeoJSON catalog files, merged (default: bundled fixtures)')
    .option('--tile-from <time>', 'repeat the catalog back to back from this RFC 3339 time (needs --tile-to)')
    .option('--tile-to <time>', 'repeat the catalog up to this RFC 3339 time (needs --tile-from)')
    .option('--indicators <file...>', 'World Bank bulk CSV files (default: bundled fixtures)')
    .option('--order <order>', `events kept when more match than max_results: ${EVENT_ORDERS.join('|')} (default: newest)`)
    .option('--latency-ms <ms>', 'delay before every answer (default: 0)')
    .option('--fault <kind=probability...>', 'inject a fault with this probability per eligible request (repeatable)')
    .option('--seed <n>', 'seed for random order, fault dice and ids (default: random)')
    .option('--empty-as <form>', 'empty events/values list written as array or null (default: array)')
    .option('--retry-after <seconds>', 'Retry-After sent with rate_limited faults (default: 1)')
    .addHelpText('after', HELP_AFTER)
    .action(async (raw: RawEmulatorFlags) => {
      await serveUntilSignal(parseEmulatorFlags(raw, process.env), process.stdout);
    });
}
