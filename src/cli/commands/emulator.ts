import { statSync } from 'node:fs';
import { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { FAULT_KINDS, isFaultKind, type FaultRule } from '../../emulator/faults.js';
import { LIVE_MAX_PER_MINUTE, LIVE_TICK_MS, type LiveSpec } from '../../emulator/live-timer.js';
import { EVENT_ORDERS, type EventOrder } from '../../emulator/selection.js';
import { SWARM_MAX_COUNT, type SwarmSpec } from '../../emulator/swarm.js';
import type { EmulatorOptions } from '../../emulator/types.js';
import { isRfc3339, parseRfc3339 } from '../../domain/time.js';

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
  mixedRandomRatio?: string;
  timePrecision?: string;
  exclusiveStart?: boolean;
  exclusiveEnd?: boolean;
  exclusiveMinMagnitude?: boolean;
  ignoreFractionalSeconds?: boolean;
  silentCap?: string;
  swarm?: string[];
  live?: string;
  liveFrom?: string;
  liveTo?: string;
}

function wholeNumber(flag: string, value: string, max: number, min = 0): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag}: expected a whole number from ${min} to ${max}, got "${value}"`);
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

/** A decimal from 0 to 1, or NaN. */
function fraction(value: string): number {
  const p = /^(\d+\.?\d*|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
  return p >= 0 && p <= 1 ? p : Number.NaN;
}

function faultRule(value: string): FaultRule {
  const [kind = '', probability = '', ...extra] = value.split('=');
  if (extra.length > 0 || !isFaultKind(kind)) {
    throw new UsageError(
      `--fault: expected KIND=PROBABILITY with KIND one of ${FAULT_KINDS.join(', ')}, got "${value}"`,
    );
  }
  const p = fraction(probability);
  if (Number.isNaN(p)) throw new UsageError(`--fault: probability must be from 0 to 1, got "${value}"`);
  return { kind, probability: p };
}

/** `<RFC3339>:<count>[:world|place]`; the count is the last number, the timestamp has colons of its own. */
function swarm(value: string): SwarmSpec {
  const m = /^(.+):(\d+)(?::(world|place))?$/.exec(value);
  const [, time = '', countText = '', spread = 'place'] = m ?? [];
  const atMs = parseRfc3339(time);
  if (atMs === null) throw new UsageError(`--swarm: expected <RFC3339>:<count>[:world|place], got "${value}"`);
  if (atMs % 1000 !== 0) throw new UsageError(`--swarm: the time must be a whole second, got "${value}"`);
  const count = Number(countText);
  if (!(count >= 1 && count <= SWARM_MAX_COUNT)) {
    throw new UsageError(`--swarm: count must be from 1 to ${SWARM_MAX_COUNT}, got "${value}"`);
  }
  return { at: new Date(atMs), count, spread: spread === 'world' ? 'world' : 'place' };
}

const LIVE_KEYS = { add: 'addPerMinute', revise: 'revisePerMinute', delete: 'deletePerMinute' } as const;
const LIVE_FORMAT = 'add=N,revise=N,delete=N[,tick-ms=N] (changes per minute)';

/** `add=600,revise=300,delete=120[,tick-ms=1000]`: missing rates are 0. */
function liveSpec(value: string): LiveSpec {
  const spec: LiveSpec = { addPerMinute: 0, revisePerMinute: 0, deletePerMinute: 0 };
  const seen = new Set<string>();
  for (const part of value.split(',')) {
    const [key = '', number = '', ...extra] = part.trim().split('=');
    if (extra.length > 0 || seen.has(key) || !(Object.hasOwn(LIVE_KEYS, key) || key === 'tick-ms')) {
      throw new UsageError(`--live: expected ${LIVE_FORMAT}, got "${value}"`);
    }
    seen.add(key);
    if (key === 'tick-ms') {
      spec.tickMs = wholeNumber('--live tick-ms', number, LIVE_TICK_MS.max, LIVE_TICK_MS.min);
      continue;
    }
    const rate = /^(\d+\.?\d*|\.\d+)$/.test(number) ? Number(number) : Number.NaN;
    if (!(rate >= 0 && rate <= LIVE_MAX_PER_MINUTE)) {
      throw new UsageError(
        `--live: ${key} must be a number of changes per minute from 0 to ${LIVE_MAX_PER_MINUTE}, got "${value}"`,
      );
    }
    spec[LIVE_KEYS[key as keyof typeof LIVE_KEYS]] = rate;
  }
  return spec;
}

/** --live and its window; refused with tiling, which the live catalog does not support. */
function liveFlags(raw: RawEmulatorFlags, options: EmulatorOptions): void {
  const windowGiven = raw.liveFrom !== undefined || raw.liveTo !== undefined;
  if (raw.live === undefined) {
    if (windowGiven) throw new UsageError('--live-from and --live-to: need --live');
    return;
  }
  if (options.tile) throw new UsageError('--live: cannot be combined with --tile-from/--tile-to');
  options.live = liveSpec(raw.live);
  if (!windowGiven) return;
  if (raw.liveFrom === undefined || raw.liveTo === undefined)
    throw new UsageError('--live-from and --live-to: give both or neither');
  const from = timestamp('--live-from', raw.liveFrom);
  const to = timestamp('--live-to', raw.liveTo);
  if (from > to) throw new UsageError(`--live-to: "${raw.liveTo}" is before --live-from "${raw.liveFrom}"`);
  options.live.window = { from, to };
}

/** The knobs that shape earthquake answers (spec 4.1 leaves them open), flag by flag. */
function answerFlags(raw: RawEmulatorFlags, options: EmulatorOptions): void {
  if (raw.order !== undefined) {
    if (!(EVENT_ORDERS as readonly string[]).includes(raw.order)) {
      throw new UsageError(`--order: expected one of ${EVENT_ORDERS.join(', ')}, got "${raw.order}"`);
    }
    options.order = raw.order as EventOrder;
  }
  if (raw.mixedRandomRatio !== undefined) {
    const r = fraction(raw.mixedRandomRatio);
    if (Number.isNaN(r))
      throw new UsageError(`--mixed-random-ratio: expected a number from 0 to 1, got "${raw.mixedRandomRatio}"`);
    options.mixedRandomRatio = r;
  }
  if (raw.timePrecision !== undefined) {
    if (raw.timePrecision !== 'ms' && raw.timePrecision !== 'second') {
      throw new UsageError(`--time-precision: expected ms or second, got "${raw.timePrecision}"`);
    }
    options.timePrecision = raw.timePrecision;
  }
  if (raw.exclusiveStart) options.startBoundary = 'exclusive';
  if (raw.exclusiveEnd) options.endBoundary = 'exclusive';
  if (raw.exclusiveMinMagnitude) options.minMagnitudeBoundary = 'exclusive';
  if (raw.ignoreFractionalSeconds) options.ignoreFractionalSeconds = true;
  if (raw.silentCap !== undefined) options.silentCap = wholeNumber('--silent-cap', raw.silentCap, 200, 1);
  if (raw.swarm) {
    options.swarms = raw.swarm.map(swarm);
    const seconds = options.swarms.map((s) => s.at.getTime());
    if (new Set(seconds).size !== seconds.length) throw new UsageError('--swarm: two swarms in the same second');
  }
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
  answerFlags(raw, options);
  liveFlags(raw, options);
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
  // A data file that does not parse throws EmulatorDataError: bad input, exit 2 (cli/exit.ts).
  // Loaded here: the emulator's data and server weigh on every other command's memory.
  const { startEmulator } = await import('../../emulator/server.js');
  const emulator = await startEmulator(options);
  out.write(`gateway emulator listening on ${emulator.url}\n`);
  if (options.live) {
    const { addPerMinute = 0, revisePerMinute = 0, deletePerMinute = 0 } = options.live;
    out.write(
      `live catalog: per minute ${addPerMinute} added, ${revisePerMinute} revised, ${deletePerMinute} deleted\n`,
    );
  }
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
  if (options.live) {
    const count = (kind: string): number => emulator.changes.filter((c) => c.kind === kind).length;
    out.write(`live catalog: ${count('add')} added, ${count('revise')} revised, ${count('delete')} deleted\n`);
  }
}

const HELP_AFTER = `
Serves POST {url}/v1/gateway/earthquake-standard/v1/earthquake-queries and
POST {url}/v1/gateway/economic-indicator-standard/v1/economic-indicator-queries
from real USGS and World Bank files (default: the bundled files in data/).

Fault kinds for --fault: ${FAULT_KINDS.join(', ')}.
Faults only hit requests that are authorized and valid, i.e. would otherwise succeed.

Answer shapes the spec allows (earthquake query):
  --order magnitude   a truncated answer keeps the largest magnitudes (null smallest), largest first
  --order depth       a truncated answer keeps the deepest events (null shallowest), deepest first
  --order id          a truncated answer keeps the smallest ids (plain string order), smallest first,
                      like ORDER BY id LIMIT n; --order id-desc the largest ids, largest first
  --order newest-swap the newest, except that a truncated answer leaves out the one at index
                      floor(max/2) of the newest-first list and holds the next older one instead
  --order mixed       per call 'random' with chance --mixed-random-ratio (default 0.2), else 'newest'
  --time-precision second   event times reported truncated to the whole second
  --exclusive-start, --exclusive-end   an event exactly at start_time / end_time does not match
  --exclusive-min-magnitude            an event exactly at min_magnitude does not match
  --ignore-fractional-seconds          start_time and end_time truncated to the second before filtering
  --silent-cap N      at most min(max_results, N) events per answer, still succeeded, nothing said
  --swarm T:COUNT[:world|place]        COUNT events (1-${SWARM_MAX_COUNT}) inside the whole second T, ids
                      swarm-<T>-<k>; world: spread over the globe, place (default): within 1 km of 35N 139E

Live catalog (like the real USGS catalog while it is queried):
  --live add=600,revise=300,delete=120[,tick-ms=1000]
                      every tick (default 1000 ms) add events live-<n>, revise events (new magnitude
                      and place, time moved by at most 5 s, same id) and delete events, at these
                      rates per minute; missing rates are 0. Not with --tile-from/--tile-to
  --live-from T --live-to T           where changes happen (default: the catalog's span)

Indicator answers hold every year from start_year to end_year, newest first, value null where
the file has none; usage.units counts every item returned.

Examples:
  MARKET_KEY=dev gateway-ingest emulator --port 8787
  gateway-ingest emulator --key dev --order random --seed 7 --fault rate_limited=0.1 --fault server_error=0.05
  gateway-ingest emulator --key dev --tile-from 2015-01-01T00:00:00Z --tile-to 2025-01-01T00:00:00Z
  gateway-ingest emulator --key dev --order mixed --exclusive-end --silent-cap 100 --swarm 2025-08-20T12:00:00Z:250:world
  gateway-ingest emulator --key dev --seed 7 --live add=600,revise=300,delete=120 --live-from 2025-09-01T00:00:00Z --live-to 2025-09-18T00:00:00Z
`;

export function emulatorCommand(): Command {
  return new Command('emulator')
    .description(
      'run a local gateway emulator (earthquake and economic indicator queries) for tests, demos and benchmarks',
    )
    .option('--port <port>', 'TCP port; 0 picks a free one (default: 0)')
    .option('--host <host>', 'address to bind (default: 127.0.0.1)')
    .option(
      '--key <key>',
      'the credential the emulator accepts (default: $MARKET_KEY; prefer the variable, flags show up in ps)',
    )
    .option('--catalog <file...>', 'USGS CSV or GeoJSON catalog files, merged (default: bundled fixtures)')
    .option('--tile-from <time>', 'repeat the catalog back to back from this RFC 3339 time (needs --tile-to)')
    .option('--tile-to <time>', 'repeat the catalog up to this RFC 3339 time (needs --tile-from)')
    .option('--indicators <file...>', 'World Bank bulk CSV files (default: bundled fixtures)')
    .option(
      '--order <order>',
      `events kept when more match than max_results: ${EVENT_ORDERS.join('|')} (default: newest)`,
    )
    .option('--mixed-random-ratio <r>', 'with --order mixed: chance per call of a random subset, 0 to 1 (default: 0.2)')
    .option('--time-precision <p>', 'event times in answers: ms or second (default: ms)')
    .option('--exclusive-start', 'an event exactly at start_time does not match (default: it does)')
    .option('--exclusive-end', 'an event exactly at end_time does not match (default: it does)')
    .option('--exclusive-min-magnitude', 'an event exactly at min_magnitude does not match (default: it does)')
    .option('--ignore-fractional-seconds', 'truncate start_time and end_time to the whole second before filtering')
    .option('--silent-cap <n>', 'answers hold at most min(max_results, n) events, 1 to 200, without saying so')
    .option('--swarm <spec...>', 'add a same-second swarm, spec <RFC3339>:<count>[:world|place] (repeatable)')
    .option('--live <rates>', `add, revise and delete events while serving: ${LIVE_FORMAT}`)
    .option('--live-from <time>', 'with --live: changes only from this RFC 3339 time (needs --live-to)')
    .option('--live-to <time>', 'with --live: changes only up to this RFC 3339 time (needs --live-from)')
    .option('--latency-ms <ms>', 'delay before every answer (default: 0)')
    .option('--fault <kind=probability...>', 'inject a fault with this probability per eligible request (repeatable)')
    .option('--seed <n>', 'seed for random order, fault dice, ids, swarms and live changes (default: random)')
    .option('--empty-as <form>', 'empty events/values list written as array or null (default: array)')
    .option('--retry-after <seconds>', 'Retry-After sent with rate_limited faults (default: 1)')
    .addHelpText('after', HELP_AFTER)
    .action(async (raw: RawEmulatorFlags) => {
      await serveUntilSignal(parseEmulatorFlags(raw, process.env), process.stdout);
    });
}
