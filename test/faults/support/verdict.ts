import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { gatewayExecutions } from '../../../src/db/schema.js';
import type { EmulatorCall } from '@gateway-ingest/emulator';
import type { EarthquakeEvent } from '../../../src/gateway/schemas.js';
import {
  gotNoAnswer,
  intervalOf,
  reconcile,
  type AuditRow,
  type Pair,
  type Reconciliation,
} from './audit-reconcile.js';
import { caughtByAny, type Disruption } from './disruptions.js';
import { compareEvents, storedEvents, type EventComparison } from './events.js';
import type { ProxiedCall } from './hold-proxy.js';
import { list } from './listing.js';
import { repeatedBilled, type Repeat } from './repeats.js';
import type { Scenario } from './scenario.js';

export interface VerdictOptions {
  /**
   * What the scenario did to the system. A call caught by one between its request and its commit
   * may have lost its paid answer (and be paid again); only a kill may leave its audit row
   * unfinished, since a process that lives completes its rows whatever the outage.
   */
  disruptions: Disruption[];
  /** What the scenario itself found on its way: exit codes, hangs, late exits. */
  problems: string[];
}

export interface Verdict {
  problems: string[];
  summary: string;
}

/** Wall-clock times of a call on the wire, from the proxy (the emulator's own clock is frozen). */
interface Clock {
  wire(call: EmulatorCall): ProxiedCall | undefined;
  scenario: Scenario;
}

function describeCall(call: EmulatorCall, clock: Clock): string {
  const status = call.httpStatus === null ? 'reset' : `HTTP ${call.httpStatus}`;
  const answered = clock.wire(call)?.answeredAt;
  const at = answered ? ` answered ${clock.scenario.elapsed(answered)}` : '';
  return `${call.executionId ?? 'no execution'} (${status}${call.fault ? ` fault ${call.fault}` : ''}${call.billed ? ', billed' : ''}${at}) ${intervalOf(call.body)}`;
}

function describeRow(r: AuditRow): string {
  return `row ${r.id} (${r.errorKind ?? 'ok'}, HTTP ${r.httpStatus ?? '-'}, billed ${String(r.billed)}, ${r.finishedAt ? 'finished' : 'never finished'}, job attempt ${r.attempt ?? '-'}) ${intervalOf(r.request)}`;
}

/** What a pair says about the audit: the wrong id, a wrong billed flag, wrong units. */
function pairProblem(pair: Pair): string | null {
  const { call, row } = pair;
  const noAnswer = gotNoAnswer(row);
  if (pair.by === 'request' && call.executionId !== null && !noAnswer)
    return `${call.executionId} was answered but its audit row has no execution id`;
  if (row.billed === null)
    return noAnswer
      ? null
      : `${describeRow(row)} has billed unknown although the client read the answer of ${call.executionId ?? 'a call without execution'}`;
  if (row.billed !== call.billed)
    return `${call.executionId ?? 'call without execution'}: the gateway ${call.billed ? 'billed' : 'did not bill'} it, the audit says billed ${String(row.billed)} (${row.errorKind ?? 'ok'})`;
  if (pair.by === 'execution' && call.billed && row.units !== call.units)
    return `${call.executionId}: units ${call.units} billed, audit says ${String(row.units)}`;
  return null;
}

/** Attempts without a row, ids audited twice or invented, rows claiming answers never given, rows unlike their call. */
function matchingProblems(r: Reconciliation, clock: Clock): string[] {
  const problems: string[] = [];
  if (r.unaudited.length > 0)
    problems.push(
      `gateway attempts without an audit row: ${r.unaudited.length} (${list(r.unaudited, (c) => describeCall(c, clock))})`,
    );
  if (r.duplicated.length > 0)
    problems.push(
      `execution ids audited more than once: ${list(r.duplicated, (d) => `${d.executionId} x${d.rows.length}`)}`,
    );
  if (r.phantom.length > 0)
    problems.push(`audit rows naming executions the gateway never issued: ${list(r.phantom, describeRow)}`);
  const answered = r.unmatchedRows.filter((row) => !gotNoAnswer(row));
  if (answered.length > 0)
    problems.push(`audit rows claiming an answer the gateway never gave: ${list(answered, describeRow)}`);
  const pairIssues = r.pairs.map(pairProblem).filter((p): p is string => p !== null);
  if (pairIssues.length > 0)
    problems.push(`audit rows unlike the gateway's log: ${pairIssues.length} (${list(pairIssues, (p) => p)})`);
  return problems;
}

/** Rows written before their call and never completed: only a kill that caught the call explains one. */
function unfinishedProblems(r: Reconciliation, rows: AuditRow[], clock: Clock, o: VerdictOptions): string[] {
  const callOf = new Map(r.pairs.map((p) => [p.row, p.call]));
  const kills = o.disruptions.filter((d) => d.kind === 'kill');
  const unexplained = rows.filter((row) => {
    if (row.finishedAt !== null) return false;
    const call = callOf.get(row);
    return !caughtByAny(row.startedAt.getTime(), (call && clock.wire(call)?.answeredAt) ?? null, kills);
  });
  if (unexplained.length === 0) return [];
  return [
    `audit rows never completed although no kill caught their call: ${unexplained.length} (${list(unexplained, describeRow)})`,
  ];
}

interface AuditTally {
  problems: string[];
  billedAudit: number;
  billedUnknown: number;
  unfinished: number;
  neverReached: number;
}

function judgeAudit(
  r: Reconciliation,
  calls: EmulatorCall[],
  rows: AuditRow[],
  clock: Clock,
  o: VerdictOptions,
): AuditTally {
  const problems = [...matchingProblems(r, clock), ...unfinishedProblems(r, rows, clock, o)];
  const unknown = r.pairs.filter((p) => p.row.billed === null && gotNoAnswer(p.row));
  const lostBilled = unknown.filter((p) => p.call.billed).length;
  const billedAudit = rows.filter((row) => row.billed === true).length;
  const billedGateway = calls.filter((c) => c.billed).length;
  if (billedAudit + lostBilled !== billedGateway) {
    problems.push(
      `billed audit rows ${billedAudit} (+${lostBilled} billed calls audited as unknown) != ${billedGateway} billed calls at the gateway`,
    );
  }
  const unfinished = rows.filter((row) => row.finishedAt === null).length;
  return { problems, billedAudit, billedUnknown: unknown.length, unfinished, neverReached: r.unmatchedRows.length };
}

/** A lost answer is explained when a disruption caught one of the uncommitted earlier copies. */
function lostToDisruption(repeat: Repeat, clock: Clock, o: VerdictOptions): boolean {
  return repeat.earlier.some((c) => {
    const wire = clock.wire(c);
    return wire !== undefined && caughtByAny(wire.arrivedAt, wire.answeredAt, o.disruptions);
  });
}

function repeatProblems(repeats: Repeat[], clock: Clock, o: VerdictOptions): string[] {
  const show = (r: Repeat) => `${describeCall(r.call, clock)} paid ${r.times}x`;
  const wasted = repeats.filter((r) => !r.lostBefore);
  const unexplained = repeats.filter((r) => r.lostBefore && !lostToDisruption(r, clock, o));
  const out: string[] = [];
  if (wasted.length > 0)
    out.push(
      `billed calls repeated although the earlier answer was recorded: ${wasted.length} (${list(wasted, show)})`,
    );
  if (unexplained.length > 0)
    out.push(
      `billed calls repeated after an answer lost with no kill or outage to explain it: ${unexplained.length} (${list(unexplained, show)})`,
    );
  return out;
}

/** Every gateway call beside the audit row matched to it, and the rows matched to none: the raw evidence. */
function dumpEvidence(scenario: Scenario, r: Reconciliation, clock: Clock): void {
  const pairOf = new Map(r.pairs.map((p) => [p.call, p]));
  const lines = scenario.emulator.calls.map((call, i) => {
    const pair = pairOf.get(call);
    const wire = clock.wire(call);
    const { body, ...rest } = call;
    const times = {
      sentAt: wire ? scenario.elapsed(wire.arrivedAt) : null,
      answeredAt: wire?.answeredAt ? scenario.elapsed(wire.answeredAt) : null,
      held: wire?.held ?? false,
    };
    return {
      gatewayCall: i + 1,
      ...rest,
      request: intervalOf(body),
      ...times,
      matchedBy: pair?.by ?? null,
      audit: pair?.row ?? null,
    };
  });
  const unmatched = r.unmatchedRows.map((row) => ({ gatewayCall: null, audit: row }));
  mkdirSync(scenario.logDir, { recursive: true });
  writeFileSync(
    join(scenario.logDir, 'reconciliation.jsonl'),
    `${[...lines, ...unmatched].map((l) => JSON.stringify(l)).join('\n')}\n`,
  );
}

interface Findings {
  calls: EmulatorCall[];
  rows: AuditRow[];
  events: EventComparison;
  audit: AuditTally;
  parts: { problems: string[]; done: number; total: number };
  repeats: Repeat[];
  repeatProblems: string[];
}

async function partitionFindings(scenario: Scenario): Promise<Findings['parts']> {
  const parts = await scenario.partitions();
  const notDone = parts.filter((p) => p.state !== 'done');
  const problems = notDone.map(
    (p) =>
      `partition ${p.partitionKey} left ${p.state}${p.lastErrorKind ? ` (last error [${p.lastErrorKind}] ${p.lastError})` : ''}`,
  );
  if (parts.length === 0) problems.push('no partitions were planned');
  return { problems, done: parts.length - notDone.length, total: parts.length };
}

function clockOf(scenario: Scenario): Clock {
  const byExecution = new Map(
    scenario.proxy.calls.filter((p) => p.executionId !== null).map((p) => [p.executionId!, p]),
  );
  return { scenario, wire: (call) => (call.executionId === null ? undefined : byExecution.get(call.executionId)) };
}

async function collect(scenario: Scenario, catalog: readonly EarthquakeEvent[], o: VerdictOptions): Promise<Findings> {
  const calls = scenario.emulator.calls.filter((c) => c.operation === 'earthquake');
  const rows = await scenario.db.db
    .select()
    .from(gatewayExecutions)
    .where(eq(gatewayExecutions.operation, 'earthquake'))
    .orderBy(asc(gatewayExecutions.id));
  const clock = clockOf(scenario);
  const matched = reconcile(calls, rows);
  dumpEvidence(scenario, matched, clock);
  // Answers the client never had: swallowed by the proxy, or given up on by the client's timeout.
  const held = scenario.proxy.calls.filter((p) => p.held && p.executionId !== null).map((p) => p.executionId!);
  const timedOut = matched.pairs
    .filter((p) => p.row.errorKind === 'timeout' && p.call.executionId !== null)
    .map((p) => p.call.executionId!);
  // An answer is stored when its audit row is complete and clean: the row commits with the events and the frontier.
  const committed = matched.pairs
    .filter((p) => p.by === 'execution' && p.row.finishedAt !== null && p.row.errorKind === null)
    .map((p) => p.call.executionId!);
  const repeats = repeatedBilled(calls, new Set([...held, ...timedOut]), new Set(committed));
  return {
    calls,
    rows,
    events: compareEvents(await storedEvents(scenario.db.db), catalog),
    audit: judgeAudit(matched, calls, rows, clock, o),
    parts: await partitionFindings(scenario),
    repeats,
    repeatProblems: repeatProblems(repeats, clock, o),
  };
}

function summaryLine(scenario: Scenario, f: Findings, problems: string[], o: VerdictOptions): string {
  const lostBefore = f.repeats.filter((r) => r.lostBefore).length;
  const kills = o.disruptions.filter((d) => d.kind === 'kill').length;
  const intervals = [...new Set(f.repeats.map((r) => intervalOf(r.call.body)))];
  return (
    `[faults] ${scenario.name}: ${problems.length === 0 ? 'PASS' : `FAIL (${problems.length} problems)`}; ` +
    `partitions ${f.parts.done}/${f.parts.total} done; events lost ${f.events.lost}, unexpected ${f.events.unexpected}, differing ${f.events.differing}; ` +
    `calls ${f.calls.length}, billed ${f.calls.filter((c) => c.billed).length}; ` +
    `audit rows ${f.rows.length} (billed ${f.audit.billedAudit}, billed unknown ${f.audit.billedUnknown}, unfinished ${f.audit.unfinished}, never reached ${f.audit.neverReached}); ` +
    `repeats ${f.repeats.length} (${lostBefore} after a lost answer; kills ${kills})${intervals.length > 0 ? ` [${list(intervals, (i) => i)}]` : ''}; ` +
    `wall ${((Date.now() - scenario.startedAt) / 1000).toFixed(1)} s; logs ${scenario.logDir}`
  );
}

/**
 * The check every scenario ends with: the table equals the catalog, the audit equals the gateway's
 * log, every partition is done, and no billed call was paid twice beyond what a disruption between
 * a call and its commit explains. Prints one summary line; returns every problem (none: a pass).
 */
export async function verdict(
  scenario: Scenario,
  catalog: readonly EarthquakeEvent[],
  o: VerdictOptions,
): Promise<Verdict> {
  const f = await collect(scenario, catalog, o);
  const problems = [...o.problems, ...f.parts.problems, ...f.events.problems, ...f.audit.problems, ...f.repeatProblems];
  const summary = summaryLine(scenario, f, problems, o);
  process.stdout.write(`${summary}\n`);
  for (const p of problems) process.stdout.write(`  - ${p}\n`);
  if (problems.length > 0)
    process.stdout.write(`  timeline:\n${scenario.timeline.map((t) => `    ${t}`).join('\n')}\n`);
  return { problems, summary };
}
