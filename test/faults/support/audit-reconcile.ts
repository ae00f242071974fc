import type { gatewayExecutions } from '../../../src/db/schema.js';
import type { EmulatorCall } from '@gateway-ingest/emulator';

export type AuditRow = typeof gatewayExecutions.$inferSelect;

/** A request body in one spelling, whichever side logged it (key order, invocation_id aside). */
export function canonicalBody(body: unknown): string {
  const parsed: unknown = typeof body === 'string' ? safeParse(body) : body;
  return stableJson(parsed);
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([k]) => k !== 'invocation_id')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** `start_time..end_time` of an earthquake request, the shortest useful name of a call. */
export function intervalOf(body: unknown): string {
  const parsed = typeof body === 'string' ? safeParse(body) : body;
  if (parsed === null || typeof parsed !== 'object') return String(parsed);
  const b = parsed as Record<string, unknown>;
  const circle =
    b.radius_km === undefined
      ? ''
      : ` circle ${stableJson(b.latitude)},${stableJson(b.longitude)} r${stableJson(b.radius_km)}`;
  return `${String(b.start_time)}..${String(b.end_time)}${circle}`;
}

export interface Pair {
  call: EmulatorCall;
  row: AuditRow;
  /** `execution`: the row carries the call's execution id; `request`: matched by request body. */
  by: 'execution' | 'request';
}

export interface Reconciliation {
  pairs: Pair[];
  /** Attempts the gateway saw that no audit row accounts for. */
  unaudited: EmulatorCall[];
  /** Audit rows with no attempt at the gateway: requests that never reached it. */
  unmatchedRows: AuditRow[];
  /** Execution ids with more than one audit row. */
  duplicated: Array<{ executionId: string; rows: AuditRow[] }>;
  /** Execution ids in the audit that the gateway never issued. */
  phantom: AuditRow[];
}

/** The client never had a readable answer: cut off, timed out, reset, or never finished (a crash). */
export function gotNoAnswer(row: AuditRow): boolean {
  return row.finishedAt === null || row.errorKind === 'timeout' || row.errorKind === 'transport';
}

function byExecution(calls: EmulatorCall[], rows: AuditRow[]) {
  const rowsById = new Map<string, AuditRow[]>();
  for (const r of rows)
    if (r.executionId !== null) rowsById.set(r.executionId, [...(rowsById.get(r.executionId) ?? []), r]);
  const issued = new Set(calls.map((c) => c.executionId).filter((id): id is string => id !== null));
  const pairs: Pair[] = [];
  const rest: EmulatorCall[] = [];
  const duplicated: Reconciliation['duplicated'] = [];
  for (const call of calls) {
    const found = call.executionId === null ? [] : (rowsById.get(call.executionId) ?? []);
    if (found.length > 1) duplicated.push({ executionId: call.executionId!, rows: found });
    if (found.length > 0) pairs.push({ call, row: found[0]!, by: 'execution' });
    else rest.push(call);
  }
  const phantom = rows.filter((r) => r.executionId !== null && !issued.has(r.executionId));
  return { pairs, rest, duplicated, phantom };
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}

/**
 * Within one request body: first the answers without an execution (500, 429, reset) with rows of
 * the same HTTP status, then the rest in the order both sides logged them.
 */
function pairSameRequest(
  calls: EmulatorCall[],
  rows: AuditRow[],
): { pairs: Pair[]; calls: EmulatorCall[]; rows: AuditRow[] } {
  const pairs: Pair[] = [];
  let freeRows = [...rows];
  const waiting: EmulatorCall[] = [];
  for (const call of calls) {
    const same =
      call.executionId === null
        ? freeRows.find((r) => r.httpStatus === call.httpStatus && r.finishedAt !== null)
        : undefined;
    if (same) {
      pairs.push({ call, row: same, by: 'request' });
      freeRows = freeRows.filter((r) => r !== same);
    } else waiting.push(call);
  }
  const n = Math.min(waiting.length, freeRows.length);
  for (let i = 0; i < n; i++) pairs.push({ call: waiting[i]!, row: freeRows[i]!, by: 'request' });
  return { pairs, calls: waiting.slice(n), rows: freeRows.slice(n) };
}

/**
 * Matches every attempt the gateway logged with the audit row that records it: by execution id
 * where the row has one, otherwise by identical request (attempts the client got no execution id
 * for: faults without an execution, timeouts, resets, crashes).
 */
export function reconcile(calls: EmulatorCall[], rows: AuditRow[]): Reconciliation {
  const first = byExecution(calls, rows);
  const withoutId = [...rows]
    .filter((r) => r.executionId === null)
    .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || a.id - b.id);
  const callGroups = groupBy(first.rest, (c) => canonicalBody(c.body));
  const rowGroups = groupBy(withoutId, (r) => canonicalBody(r.request));
  const out: Reconciliation = {
    pairs: first.pairs,
    unaudited: [],
    unmatchedRows: [],
    duplicated: first.duplicated,
    phantom: first.phantom,
  };
  for (const [body, groupCalls] of callGroups) {
    const matched = pairSameRequest(groupCalls, rowGroups.get(body) ?? []);
    rowGroups.set(body, matched.rows);
    out.pairs.push(...matched.pairs);
    out.unaudited.push(...matched.calls);
  }
  for (const left of rowGroups.values()) out.unmatchedRows.push(...left);
  return out;
}
