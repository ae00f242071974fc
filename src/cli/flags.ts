/**
 * Flag values into domain values. The rules are the domain's zod schemas; only the wording is
 * the CLI's own, so that every message names the flag and repeats the value given.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type * as z from 'zod';
import { DEFAULT_JOBS_FILE } from '../config/jobs-file/default-path.js';
import { parseInstant } from '../domain/time.js';
import { UsageError } from '../errors.js';

/** RFC 3339 timestamp, or a YYYY-MM-DD date meaning UTC midnight (the domain's rule, as jobs.yaml has it). */
export function parseInstantFlag(flag: string, value: string): number {
  const parsed = parseInstant(value);
  if (!parsed.ok) throw new UsageError(`${flag}: ${parsed.problem}`);
  return parsed.ms;
}

function firstIssue(error: z.ZodError): string {
  return error.issues[0]?.message ?? 'is invalid';
}

/** A number checked by a domain schema; the schema's range is quoted back in the message. */
export function parseNumberFlag(flag: string, value: string | undefined, schema: z.ZodType<number>): number | null {
  if (value === undefined) return null;
  const n = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`${flag}: "${value}" is not a number`);
  const parsed = schema.safeParse(n);
  if (!parsed.success) throw new UsageError(`${flag}: "${value}" ${describeNumberRule(parsed.error)}`);
  return parsed.data;
}

/** zod says "Too big: expected number to be <=10"; the CLI says "must be at most 10". */
function describeNumberRule(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue?.code === 'too_big') return `must be ${issue.inclusive ? 'at most' : 'below'} ${String(issue.maximum)}`;
  if (issue?.code === 'too_small') return `must be ${issue.inclusive ? 'at least' : 'above'} ${String(issue.minimum)}`;
  return firstIssue(error);
}

/** `--max-billed-calls N`: a positive whole number. */
export function parseMaxBilledCalls(flag: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (
    !/^\d+$/.test(value) ||
    Number(value) < 1 ||
    !Number.isSafeInteger(Number(value)) ||
    Number(value) > 2_147_483_647
  ) {
    throw new UsageError(`${flag}: "${value}" must be a whole number of at least 1`);
  }
  return Number(value);
}

/** A code checked by a domain schema (indicator, country). */
export function parseCodeFlag(flag: string, value: string, schema: z.ZodType<string>): string {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(`${flag}: "${value}" ${firstIssue(parsed.error)}`);
  return parsed.data;
}

export function parseYearFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}$/.test(value)) throw new UsageError(`${flag}: "${value}" must be a four-digit year`);
  return Number(value);
}

/** Comma-separated and repeatable: `--country US,CHN --country WLD`. */
export function collectList(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v.length > 0),
  ];
}

/** The range flags of `backfill earthquakes`, which `plan earthquakes` takes too. */
export function earthquakeRangeOptions(c: Command): Command {
  return c
    .requiredOption('--from <time>', 'start: RFC 3339 timestamp or YYYY-MM-DD (UTC midnight)')
    .option('--to <time>', 'end: RFC 3339 timestamp or YYYY-MM-DD (default: now)')
    .option('--min-magnitude <m>', 'minimum magnitude, -1 to 10')
    .option('--latitude <deg>', 'circle center latitude, -90 to 90')
    .option('--longitude <deg>', 'circle center longitude, -180 to 180')
    .option('--radius-km <km>', 'circle radius, above 0 and at most 20001.6');
}

/** The same for indicator series. */
export function indicatorRangeOptions(c: Command): Command {
  return c
    .requiredOption('--indicator <codes>', 'indicator codes, comma-separated or repeated', collectList)
    .requiredOption(
      '--country <codes>',
      'country or aggregate codes (US, USA, CHN, WLD, ...), comma-separated or repeated',
      collectList,
    )
    .option('--from-year <year>', 'first year, 1960 or later (default: nine years before --to-year)')
    .option('--to-year <year>', 'last year, not after the current year (default: the current year)');
}

export interface ConfigOptionUse {
  /** What the command reads the file for, as the help says it. */
  purpose?: string;
  /**
   * False (the default): the command runs from the file, ./jobs.yaml unless told, and it must load.
   * True: the command only joins what the file names; without --config it reads ./jobs.yaml when
   * present, and leaves `config` undefined so that only an explicit path must load.
   */
  optional?: boolean;
}

/** `--config <path>`: the jobs file, for every command that reads one. */
export function configOption({
  purpose = 'jobs file declaring the streams to ingest',
  optional = false,
}: ConfigOptionUse = {}): Option {
  const option = new Option(
    '--config <path>',
    optional ? `${purpose} (default: ${DEFAULT_JOBS_FILE} when present)` : purpose,
  ).argParser((path: string) => {
    if (path.trim() === '') throw new InvalidArgumentError('must be the path of a jobs file.');
    return path;
  });
  return optional ? option : option.default(DEFAULT_JOBS_FILE);
}

/** The flag of every command that calls the gateway. */
export function allowInsecureHttpOption(): Option {
  return new Option(
    '--allow-insecure-http',
    'allow plain http:// to a gateway that is not on this machine ' +
      '(MARKET_KEY travels in clear; also GATEWAY_ALLOW_INSECURE_HTTP=1)',
  );
}

export function maxBilledCallsOption(): Option {
  return new Option(
    '--max-billed-calls <n>',
    'stop (paused by budget) before the backfill would go past n billed calls; raise it with `backfill budget ID N`',
  );
}

/** More sample calls than this is a backfill, not a sample. */
export const MAX_SAMPLE = 1_000;

const sampleHelp =
  `pay for n earthquake calls (at most ${MAX_SAMPLE}) spread over the range ` +
  'to measure its event density when nothing stored tells it';

/** The flags `backfill` gains: plan instead of enqueueing, skip the confirmation, pay for a sample. */
export function addPlanOptions(c: Command): Command {
  return c
    .option(
      '--dry-run',
      'print the plan (windows, estimated billed calls, units and time) without calling the gateway or enqueueing',
    )
    .option('--json', 'with --dry-run: print the plan as one JSON object')
    .option('--yes', 'enqueue without asking, even above CONFIRM_BILLED_CALLS')
    .option('--sample <n>', sampleHelp);
}

/** The flags of `plan`. */
export function planOptions(c: Command): Command {
  return c
    .option('--json', 'print the plan as one JSON object')
    .option('--sample <n>', sampleHelp)
    .option('--refresh', 'plan as `backfill --refresh` would: re-read what was already ingested')
    .addOption(allowInsecureHttpOption());
}
