/**
 * Plan before paying: `plan ...` and `backfill ... --dry-run` print what a backfill would fetch and
 * cost without calling the gateway or enqueueing (unless `--sample N` is asked to pay for a density
 * measurement); a real backfill estimated above CONFIRM_BILLED_CALLS asks before enqueueing.
 */
import { createInterface } from 'node:readline/promises';
import type { ResolvedEnv } from '../../config/env.js';
import type { Db } from '../../db/connection.js';
import { earthquakeGatewayKey } from '../../db/gateway-knowledge.js';
import { groupDigits } from '../../domain/text.js';
import { UsageError } from '../../errors.js';
import type { Gateway } from '../../gateway/client.js';
import { planBackfill, type BackfillRequest, type Plan } from '../../ingest/plan.js';
import { isMeasured } from '../../planning/density.js';
import type { SampleResult } from '../../ingest/sample.js';
import type { Log } from '../../log.js';
import { EXIT } from '../exit.js';
import { connectDb, loadEnv } from '../runtime.js';
import { createLog } from '../../log.js';
import type { Session } from '../session.js';
import {
  parseEarthquakeFlags,
  parseIndicatorFlags,
  streamRequest,
  type EarthquakeRangeFlags,
  type IndicatorRangeFlags,
} from '../backfill-request.js';
import { MAX_SAMPLE } from '../flags.js';
import { currentYearEverywhere } from '../../domain/time.js';

export interface PlanFlags {
  dryRun?: boolean;
  json?: boolean;
  yes?: boolean;
  sample?: string;
  refresh?: boolean;
  allowInsecureHttp?: boolean;
}

export function parseSampleFlag(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_SAMPLE)
    throw new UsageError(`--sample: "${value}" must be a whole number from 1 to ${MAX_SAMPLE}`);
  return Number(value);
}

export interface PlanOutcome {
  plan: Plan;
  /** null: no sample was asked for; `skipped`: asked for, but the density was already known. */
  sampled: SampleResult | 'skipped' | null;
}

function settingsOf(env: ResolvedEnv, nowMs: number) {
  return {
    nowMs,
    concurrency: env.workerConcurrency,
    lanes: env.windowLanes,
    gatewayKey: env.gateway.baseUrl === null ? null : earthquakeGatewayKey(env.gateway.baseUrl),
    knowledgeTtlMs: env.gatewayKnowledgeTtlMs,
  };
}

/** The plan, after paying for `sample` calls where the density is not known from what is stored. */
export async function computePlan(
  db: Db,
  env: ResolvedEnv,
  request: BackfillRequest,
  sample: number,
  gateway: () => Promise<Gateway>,
  log: Log,
): Promise<PlanOutcome> {
  const first = await planBackfill(db, request, settingsOf(env, Date.now()));
  if (sample === 0 || request.operation !== 'earthquake') return { plan: first, sampled: null };
  const targets = first.plannedWindows.filter((w) => !isMeasured(w.density)).map((w) => w.window);
  if (targets.length === 0) return { plan: first, sampled: 'skipped' };
  // Samples are billed calls like any other: BILLED_CALLS_PER_DAY holds for them too.
  // Sampling is the only part of a plan that calls the gateway: a plan without it loads no HTTP client.
  const { sampleDensity } = await import('../../ingest/sample.js');
  const deps = {
    gateway: await gateway(),
    db,
    log,
    knowledgeTtlMs: env.gatewayKnowledgeTtlMs,
    budget: { billedCallsPerDay: env.billedCallsPerDay },
  };
  const streamKey = first.streams[0]!.streamKey;
  const sampled = await sampleDensity(deps, streamKey, request.filters, targets, sample);
  return { plan: await planBackfill(db, request, settingsOf(env, Date.now())), sampled };
}

/** The one JSON object of `--dry-run --json` / `plan --json`. */
export function planJson({ plan, sampled }: PlanOutcome): Record<string, unknown> {
  const {
    plannedWindows,
    operation,
    windows,
    windowsCovered,
    estimatedBilledCalls,
    estimatedUnits,
    estimatedSeconds,
    ...details
  } = plan;
  void plannedWindows;
  const sample =
    sampled === null ? null : sampled === 'skipped' ? { skipped: true, reason: 'density already known' } : sampled;
  return {
    operation,
    windows,
    windowsCovered,
    estimatedBilledCalls,
    estimatedUnits,
    estimatedSeconds,
    unmeasuredWindows: unmeasuredWindows(plan),
    ...details,
    sample,
  };
}

const n = groupDigits;
const counted = (x: number, one: string, many: string) => `${n(x)} ${x === 1 ? one : many}`;

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5_400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}

/** Pure: the plan as lines for people. */
export function planLines({ plan, sampled }: PlanOutcome): string[] {
  const [one, many] = plan.operation === 'earthquake' ? ['window', 'windows'] : ['year chunk', 'year chunks'];
  const lines = [
    `plan: ${counted(plan.windows, one, many)} to fetch, ${n(plan.windowsCovered)} already covered ` +
      `(${counted(plan.streams.length, 'stream', 'streams')})`,
  ];
  // A done chunk covering part of a series' range leaves the rest to fetch: it is not one chunk fewer.
  const partly = plan.streams.filter((x) => x.windows > 0 && x.windowsCovered > 0).length;
  if (partly > 0)
    lines.push(
      `  ${n(partly)} of ${counted(plan.streams.length, 'stream', 'streams')} partly covered: ` +
        `only the ${plan.operation === 'earthquake' ? 'time' : 'years'} they lack ${partly === 1 ? 'is' : 'are'} ` +
        `in the ${many} to fetch`,
    );
  if (sampled !== null && sampled !== 'skipped') {
    lines.push(
      `  sampled: ${sampled.calls} calls, ${sampled.billedCalls} billed` +
        (sampled.failed ? `, ${sampled.failed} failed` : '') +
        ' (audited with purpose "sample")',
    );
    if (sampled.stopped) lines.push(`  sampling stopped early: ${sampled.stopped}`);
  }
  if (sampled === 'skipped') lines.push('  --sample: not used, the density is already known from what is stored');
  if (plan.density) {
    const d = plan.density.windows;
    const from = plan.density.sourceStreams.length > 0 ? ` from ${plan.density.sourceStreams.join(', ')}` : '';
    lines.push(
      `  event density: ${d.exact} counted exactly, ${d.scaled} partly, ` +
        `${d.bounded > 0 ? `${d.bounded} bounded (a sample came back full), ` : ''}` +
        `${d.extrapolated} extrapolated, ${d.unknown} unknown${from}` +
        (plan.density.samples ? `, ${counted(plan.density.samples, 'sample', 'samples')}` : ''),
    );
  }
  const calls = plan.estimatedBilledCalls;
  if (calls === null) {
    lines.push(
      '  estimated billed calls: unknown, no event density is known for these windows ' +
        '(nothing stored for this or a wider stream); ' +
        `at least ${n(plan.minimumBilledCalls)} (one per window)`,
    );
    lines.push('  pass --sample N to pay for N calls that measure it, or backfill a short range first');
    return lines;
  }
  const order = plan.orderFactor
    ? ` (order factor ${plan.orderFactor.expected.toFixed(2)}` +
      (plan.orderFactor.measuredWindows
        ? `, measured on ${plan.orderFactor.measuredWindows} full windows`
        : ', default') +
      ')'
    : '';
  lines.push(
    `  estimated billed calls: ${n(calls.expected)} (${n(calls.low)} to ${n(calls.high)})${order}` +
      (plan.capProbe === 'expected' ? ', a cap probe included' : ''),
  );
  if (plan.estimatedUnits)
    lines.push(
      `  estimated units: ${n(plan.estimatedUnits.expected)} ${plan.estimatedUnits.unit} ` +
        `(${n(plan.estimatedUnits.low)} to ${n(plan.estimatedUnits.high)})`,
    );
  const unmeasured = unmeasuredWindows(plan);
  if (unmeasured > 0)
    lines.push(
      `  ${n(unmeasured)} of ${counted(plan.windows, 'window', 'windows')} unmeasured: their count is a guess, and ` +
        `the range allows for the densest the catalog gets; --sample ${2 * plan.windows} measures most ` +
        '(a dense window takes two or three samples; the plan then says what is still unmeasured)',
    );
  if (plan.estimatedSeconds !== null) {
    const latency = plan.latencySource === 'measured' ? 'median of recent calls' : 'no call measured yet';
    const cycle = plan.callCycleMs === null ? '' : `, ${plan.callCycleMs} ms from one call of a window to its next`;
    lines.push(
      `  estimated time: ${duration(plan.estimatedSeconds)} at WORKER_CONCURRENCY=${plan.concurrency}, ` +
        `${plan.latencyMs} ms per call (${latency})${cycle}`,
    );
  }
  return lines;
}

/** Windows whose own count does not say how dense they are (a full sample, other windows' rate, nothing). */
export function unmeasuredWindows(plan: Plan): number {
  if (!plan.density) return 0;
  const d = plan.density.windows;
  return d.bounded + d.extrapolated + d.unknown;
}

/** What the threshold is compared with: the expected calls, or the certain minimum when nothing is known. */
export function billedCallsToConfirm(plan: Plan): number {
  return plan.estimatedBilledCalls?.expected ?? plan.minimumBilledCalls;
}

async function gatewayFor(env: ResolvedEnv): Promise<Gateway> {
  return (await import('../connections.js')).gatewayFromEnv(env);
}

/** `backfill --dry-run`: prints the plan; nothing is enqueued, Redis is not needed. */
export async function dryRun(env: ResolvedEnv, request: BackfillRequest, flags: PlanFlags): Promise<void> {
  const sample = parseSampleFlag(flags.sample);
  const db = await connectDb(env);
  let gateway: Gateway | null = null;
  try {
    const outcome = await computePlan(
      db.db,
      env,
      request,
      sample,
      async () => (gateway ??= await gatewayFor(env)),
      createLog(env.logLevel),
    );
    process.stdout.write(
      flags.json ? `${JSON.stringify(planJson(outcome), null, 2)}\n` : `${planLines(outcome).join('\n')}\n`,
    );
    process.exitCode = EXIT.ok;
  } finally {
    await (gateway as Gateway | null)?.close();
    await db.close();
  }
}

async function ask(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/**
 * Just before a real backfill enqueues: prints the estimate (stderr), and above
 * CONFIRM_BILLED_CALLS asks on a TTY; without one it refuses (exit 2) unless --yes. False: do not enqueue.
 */
export async function confirmBackfill(s: Session, request: BackfillRequest, flags: PlanFlags): Promise<boolean> {
  const sample = parseSampleFlag(flags.sample);
  let own: Gateway | null = null;
  try {
    const outcome = await computePlan(
      s.db.db,
      s.env,
      request,
      sample,
      async () => s.gateway ?? (own ??= await gatewayFor(s.env)),
      s.log,
    );
    process.stderr.write(`${planLines(outcome).join('\n')}\n`);
    const calls = billedCallsToConfirm(outcome.plan);
    if (flags.yes || calls <= s.env.confirmBilledCalls) return true;
    const above =
      `${n(calls)} billed calls${outcome.plan.estimatedBilledCalls ? ' expected' : ' at least'}, ` +
      `above CONFIRM_BILLED_CALLS=${s.env.confirmBilledCalls}`;
    if (!process.stdin.isTTY || !process.stderr.isTTY)
      throw new UsageError(
        `${above}: nothing enqueued; pass --yes to enqueue without asking (or raise CONFIRM_BILLED_CALLS)`,
      );
    if (await ask(`${above}: proceed? [y/N] `)) return true;
    process.stderr.write('nothing enqueued\n');
    process.exitCode = EXIT.usage;
    return false;
  } finally {
    await (own as Gateway | null)?.close();
  }
}

async function runPlan(flags: PlanFlags, request: BackfillRequest): Promise<void> {
  await dryRun(loadEnv(process.env, { allowInsecureHttp: flags.allowInsecureHttp }), request, flags);
}

export async function planEarthquakes(f: EarthquakeRangeFlags & PlanFlags): Promise<void> {
  const parsed = parseEarthquakeFlags(f, Date.now());
  await runPlan(f, { operation: 'earthquake', ...parsed, refresh: Boolean(f.refresh) });
}

export async function planIndicators(f: IndicatorRangeFlags & PlanFlags): Promise<void> {
  const parsed = parseIndicatorFlags(f, currentYearEverywhere(Date.now()));
  await runPlan(f, { operation: 'indicator', ...parsed, refresh: Boolean(f.refresh) });
}

export async function planStream(f: PlanFlags & { stream?: string; config: string }): Promise<void> {
  if (!f.stream) throw new UsageError('plan needs a subcommand (earthquakes, indicators) or --stream NAME');
  await runPlan(f, await streamRequest(f.config, f.stream, Boolean(f.refresh), Date.now()));
}
