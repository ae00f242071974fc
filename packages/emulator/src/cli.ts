/**
 * The emulator as a command: `gateway-ingest emulator` hands its arguments here. Commander checks
 * every flag (choices, parsers, conflicts); what it cannot express (pairs given together, the key
 * from MARKET_KEY) is checked after parsing. Every bad value is an EmulatorUsageError naming its flag.
 */
import { statSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { TIME_PRECISIONS, type TimePrecision } from './behaviour.js';
import { FAULT_KINDS, isFaultKind, type FaultRule } from './faults.js';
import { LIVE_MAX_PER_MINUTE, LIVE_TICK_MS, type LiveSpec } from './live-timer.js';
import { EVENT_ORDERS, type EventOrder } from './selection.js';
import { EmulatorDataError, EmulatorUsageError, isRfc3339 } from './spec.js';
import { SWARM_MAX_COUNT, type SwarmSpec } from './swarm.js';
import type { EmulatorOptions } from './types.js';

const wholeNumber =
  (min: number, max: number) =>
  (value: string): number => {
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!(n >= min && n <= max)) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return n;
  };

/** A decimal from 0 to 1. */
function fraction(value: string): number {
  const p = /^(\d+\.?\d*|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
  if (!(p >= 0 && p <= 1)) throw new InvalidArgumentError('expected a number from 0 to 1.');
  return p;
}

function timestamp(value: string): Date {
  if (!isRfc3339(value)) throw new InvalidArgumentError('expected an RFC 3339 timestamp.');
  return new Date(value);
}

function existingFile(path: string): string {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    // Reported below with the flag's name, which says more than ENOENT does.
  }
  if (!isFile) throw new InvalidArgumentError('no such file.');
  return path;
}

const repeatable =
  <T>(parse: (value: string) => T) =>
  (value: string, previous: T[] | undefined): T[] => [...(previous ?? []), parse(value)];

function faultRule(value: string): FaultRule {
  const [kind = '', probability = '', ...extra] = value.split('=');
  if (extra.length > 0 || !isFaultKind(kind)) {
    throw new InvalidArgumentError(`expected KIND=PROBABILITY with KIND one of ${FAULT_KINDS.join(', ')}.`);
  }
  return { kind, probability: fraction(probability) };
}

/** `<RFC3339>:<count>[:world|place]`; the count is the last number, the timestamp has colons of its own. */
function swarm(value: string): SwarmSpec {
  const m = /^(.+):(\d+)(?::(world|place))?$/.exec(value);
  const [, time = '', countText = '', spread = 'place'] = m ?? [];
  if (!isRfc3339(time)) throw new InvalidArgumentError('expected <RFC3339>:<count>[:world|place].');
  const at = new Date(time);
  if (at.getTime() % 1000 !== 0) throw new InvalidArgumentError('the time must be a whole second.');
  const count = Number(countText);
  if (!(count >= 1 && count <= SWARM_MAX_COUNT)) {
    throw new InvalidArgumentError(`count must be from 1 to ${SWARM_MAX_COUNT}.`);
  }
  return { at, count, spread: spread === 'world' ? 'world' : 'place' };
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
      throw new InvalidArgumentError(`expected ${LIVE_FORMAT}.`);
    }
    seen.add(key);
    if (key === 'tick-ms') {
      spec.tickMs = wholeNumber(LIVE_TICK_MS.min, LIVE_TICK_MS.max)(number);
      continue;
    }
    const rate = /^(\d+\.?\d*|\.\d+)$/.test(number) ? Number(number) : Number.NaN;
    if (!(rate >= 0 && rate <= LIVE_MAX_PER_MINUTE)) {
      throw new InvalidArgumentError(`${key} must be a number of changes per minute from 0 to ${LIVE_MAX_PER_MINUTE}.`);
    }
    spec[LIVE_KEYS[key as keyof typeof LIVE_KEYS]] = rate;
  }
  return spec;
}

/** The flags as commander hands them over, each already parsed by its option. */
interface EmulatorFlags {
  port?: number;
  host?: string;
  key?: string;
  catalog?: string[];
  tileFrom?: Date;
  tileTo?: Date;
  indicators?: string[];
  order?: EventOrder;
  latencyMs?: number;
  fault?: FaultRule[];
  seed?: number;
  emptyAs?: 'array' | 'null';
  retryAfter?: number;
  mixedRandomRatio?: number;
  timePrecision?: TimePrecision;
  exclusiveStart?: boolean;
  exclusiveEnd?: boolean;
  exclusiveMinMagnitude?: boolean;
  ignoreFractionalSeconds?: boolean;
  silentCap?: number;
  swarm?: SwarmSpec[];
  live?: LiveSpec;
  liveFrom?: Date;
  liveTo?: Date;
}

function pair(a: Date | undefined, b: Date | undefined, names: [string, string]): { from: Date; to: Date } | null {
  if ((a === undefined) !== (b === undefined))
    throw new EmulatorUsageError(`${names.join(' and ')}: give both or neither`);
  if (a === undefined || b === undefined) return null;
  if (a > b) throw new EmulatorUsageError(`${names[1]}: ${b.toISOString()} is before ${names[0]} ${a.toISOString()}`);
  return { from: a, to: b };
}

/** Parsed flags (and MARKET_KEY) -> emulator options, for what commander's options cannot check alone. */
function toOptions(f: EmulatorFlags, env: NodeJS.ProcessEnv): EmulatorOptions {
  // An empty MARKET_KEY counts as unset, as it does for the pipeline.
  const key = f.key ?? (env['MARKET_KEY'] || undefined);
  if (key === undefined || key === '') throw new EmulatorUsageError('--key: required (or set MARKET_KEY)');
  if (f.host !== undefined && f.host.trim() === '') throw new EmulatorUsageError('--host: must not be empty');
  const tile = pair(f.tileFrom, f.tileTo, ['--tile-from', '--tile-to']);
  const liveWindow = pair(f.liveFrom, f.liveTo, ['--live-from', '--live-to']);
  if (liveWindow && !f.live) throw new EmulatorUsageError('--live-from and --live-to: need --live');
  if (f.swarm && new Set(f.swarm.map((s) => s.at.getTime())).size !== f.swarm.length) {
    throw new EmulatorUsageError('--swarm: two swarms in the same second');
  }
  const options: EmulatorOptions = { key };
  const set = <K extends keyof EmulatorOptions>(k: K, v: EmulatorOptions[K] | undefined): void => {
    if (v !== undefined) options[k] = v;
  };
  set('port', f.port);
  set('host', f.host);
  set('earthquakeFiles', f.catalog);
  set('indicatorFiles', f.indicators);
  if (tile) options.tile = tile;
  set('order', f.order);
  set('mixedRandomRatio', f.mixedRandomRatio);
  set('timePrecision', f.timePrecision);
  if (f.exclusiveStart) options.startBoundary = 'exclusive';
  if (f.exclusiveEnd) options.endBoundary = 'exclusive';
  if (f.exclusiveMinMagnitude) options.minMagnitudeBoundary = 'exclusive';
  if (f.ignoreFractionalSeconds) options.ignoreFractionalSeconds = true;
  set('silentCap', f.silentCap);
  set('swarms', f.swarm);
  if (f.live) options.live = liveWindow ? { ...f.live, window: liveWindow } : f.live;
  set('latencyMs', f.latencyMs);
  set('faults', f.fault);
  set('seed', f.seed);
  set('emptyAs', f.emptyAs);
  set('retryAfterSeconds', f.retryAfter);
  return options;
}

const HELP_AFTER = `
Serves POST {url}/v1/gateway/earthquake-standard/v1/earthquake-queries and
POST {url}/v1/gateway/economic-indicator-standard/v1/economic-indicator-queries
from real USGS and World Bank files (default: the files bundled with this package).

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
  --time-precision second   event times reported truncated to the whole second (minute: to the minute)
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

function opt<T>(flags: string, description: string, parse?: (value: string, previous: T) => T): Option {
  const o = new Option(flags, description);
  return parse ? o.argParser(parse) : o;
}

/** The command's definition; `action` receives the options once commander and toOptions accept them. */
export function emulatorCommand(action: (options: EmulatorOptions) => Promise<void> = serve): Command {
  return new Command('emulator')
    .description(
      'run a local gateway emulator (earthquake and economic indicator queries) for tests, demos and benchmarks',
    )
    .addOption(opt('--port <port>', 'TCP port; 0 picks a free one (default: 0)', wholeNumber(0, 65_535)))
    .addOption(opt('--host <host>', 'address to bind (default: 127.0.0.1)'))
    .addOption(
      opt(
        '--key <key>',
        'the credential the emulator accepts (default: $MARKET_KEY; prefer the variable, flags show up in ps)',
      ),
    )
    .addOption(
      opt(
        '--catalog <file...>',
        'USGS CSV or GeoJSON catalog files, merged (default: bundled)',
        repeatable(existingFile),
      ),
    )
    .addOption(
      opt('--tile-from <time>', 'repeat the catalog back to back from this RFC 3339 time (needs --tile-to)', timestamp),
    )
    .addOption(opt('--tile-to <time>', 'repeat the catalog up to this RFC 3339 time (needs --tile-from)', timestamp))
    .addOption(opt('--indicators <file...>', 'World Bank bulk CSV files (default: bundled)', repeatable(existingFile)))
    .addOption(
      opt('--order <order>', 'events kept when more match than max_results (default: newest)').choices(EVENT_ORDERS),
    )
    .addOption(
      opt(
        '--mixed-random-ratio <r>',
        'with --order mixed: chance per call of a random subset, 0 to 1 (default: 0.2)',
        fraction,
      ),
    )
    .addOption(opt('--time-precision <p>', 'event times in answers (default: ms)').choices(TIME_PRECISIONS))
    .addOption(opt('--exclusive-start', 'an event exactly at start_time does not match (default: it does)'))
    .addOption(opt('--exclusive-end', 'an event exactly at end_time does not match (default: it does)'))
    .addOption(opt('--exclusive-min-magnitude', 'an event exactly at min_magnitude does not match (default: it does)'))
    .addOption(
      opt('--ignore-fractional-seconds', 'truncate start_time and end_time to the whole second before filtering'),
    )
    .addOption(
      opt(
        '--silent-cap <n>',
        'answers hold at most min(max_results, n) events, without saying so',
        wholeNumber(1, 200),
      ),
    )
    .addOption(
      opt(
        '--swarm <spec...>',
        'add a same-second swarm, spec <RFC3339>:<count>[:world|place] (repeatable)',
        repeatable(swarm),
      ),
    )
    .addOption(
      opt('--live <rates>', `add, revise and delete events while serving: ${LIVE_FORMAT}`, liveSpec).conflicts([
        'tileFrom',
        'tileTo',
      ]),
    )
    .addOption(
      opt('--live-from <time>', 'with --live: changes only from this RFC 3339 time (needs --live-to)', timestamp),
    )
    .addOption(
      opt('--live-to <time>', 'with --live: changes only up to this RFC 3339 time (needs --live-from)', timestamp),
    )
    .addOption(opt('--latency-ms <ms>', 'delay before every answer (default: 0)', wholeNumber(0, 600_000)))
    .addOption(
      opt(
        '--fault <kind=probability...>',
        'inject a fault with this probability per eligible request (repeatable)',
        repeatable(faultRule),
      ),
    )
    .addOption(
      opt(
        '--seed <n>',
        'seed for random order, fault dice, ids, swarms and live changes (default: random)',
        wholeNumber(0, 2 ** 32 - 1),
      ),
    )
    .addOption(
      opt('--empty-as <form>', 'empty events/values list written as array or null (default: array)').choices([
        'array',
        'null',
      ]),
    )
    .addOption(
      opt('--retry-after <seconds>', 'Retry-After sent with rate_limited faults (default: 1)', wholeNumber(0, 86_400)),
    )
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: EmulatorFlags) => action(toOptions(flags, process.env)));
}

/**
 * Arguments -> emulator options without serving: commander's errors come back as EmulatorUsageError
 * (tests, and callers that want to check flags first).
 */
export function parseEmulatorArgs(args: readonly string[], env: NodeJS.ProcessEnv = process.env): EmulatorOptions {
  let parsed: EmulatorFlags | null = null;
  const cmd = emulatorCommand(async () => undefined)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  cmd.action((flags: EmulatorFlags) => {
    parsed = flags;
  });
  try {
    cmd.parse([...args], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) throw new EmulatorUsageError(e.message.replace(/^error: /, ''));
    throw e;
  }
  if (parsed === null) throw new EmulatorUsageError('no options parsed');
  return toOptions(parsed, env);
}

/** Runs until SIGINT or SIGTERM. Prints the base URL, never the key. */
export async function serveUntilSignal(options: EmulatorOptions, out: NodeJS.WritableStream): Promise<void> {
  // Loaded here: the data and the server are what weigh; parsing flags should not pay for them.
  const { startEmulator } = await import('./server.js');
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

const serve = (options: EmulatorOptions): Promise<void> => serveUntilSignal(options, process.stdout);

/**
 * Runs the command on `args` (the words after `emulator`) and returns the exit code: 0 after a
 * signal, 2 for a bad flag or a data file that does not parse, with the reason on stderr.
 */
export async function runEmulatorCli(args: readonly string[], name = 'gateway-ingest emulator'): Promise<number> {
  const cmd = emulatorCommand().name(name).exitOverride();
  try {
    await cmd.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof EmulatorUsageError || e instanceof EmulatorDataError) {
      process.stderr.write(`error: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
