import * as z from 'zod';
import { envelopeSchema, executionSchema } from './schemas.js';
import { classifyAttempt, parseRetryAfterMs } from './classify.js';
import { storableJson, storableOrNull, UNSTORABLE_ESCAPE } from '../domain/text.js';

/** What can be read of an answer that may not fit the spec at all. */
const readableSchema = z.object({
  code: z.number().int().optional().catch(undefined),
  message: z.string().nullish().catch(undefined),
  data: z
    .object({ execution: executionSchema.optional().catch(undefined) })
    .nullish()
    .catch(undefined),
});

export interface ReadAnswer<R> {
  httpStatus: number;
  code: number | null;
  message: string | null;
  outcome: string | null;
  units: number | null;
  executionId: string | null;
  invocationId: string | null;
  result: R | null;
  problem: string | null;
  retryAfterMs: number | null;
  kind: ReturnType<typeof classifyAttempt>;
}

/**
 * A body cut off mid-JSON may still carry `data.execution`: the gateway bills what it called
 * `succeeded` whether or not the bytes arrived whole, so the audit reads what it can.
 */
export function salvageExecution(text: string): z.infer<typeof readableSchema> {
  const str = (re: RegExp) => re.exec(text)?.[1];
  const execution = /"execution"\s*:\s*\{([^{}]*(\{[^{}]*\}[^{}]*)*)/.exec(text)?.[1] ?? '';
  const outcome = str(/"outcome"\s*:\s*"([^"]*)"/);
  const units = /"units"\s*:\s*(-?\d+(?:\.\d+)?)/.exec(execution)?.[1];
  const id = /"id"\s*:\s*"?([^",}]*)"?/.exec(execution)?.[1];
  const invocation = /"invocation_id"\s*:\s*"?([^",}]*)"?/.exec(execution)?.[1];
  const code = /^\s*\{\s*"code"\s*:\s*(-?\d+)/.exec(text)?.[1];
  if (outcome === undefined) return {};
  return {
    code: code === undefined ? undefined : Number(code),
    data: {
      execution: {
        outcome,
        id,
        invocation_id: invocation,
        usage: units === undefined ? undefined : { units: Number(units) },
      },
    },
  };
}

/** The envelope alone, its result read by the operation's own schema (or missing: an empty match may say nothing). */
const envelope = envelopeSchema(z.unknown().optional());

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '<root>'}: ${i.message}`)
    .join('; ');
}

/** A result with no item in it, in any form: no result at all, no list, a list null or empty. */
function holdsNothing(raw: unknown, list: string): boolean {
  if (raw === null || raw === undefined) return true;
  if (typeof raw !== 'object' || Array.isArray(raw)) return false;
  const items = (raw as Record<string, unknown>)[list];
  return items === undefined || items === null || (Array.isArray(items) && items.length === 0);
}

/**
 * What an answer that matched nothing stands for, where the spec shows no body for an empty match:
 * `result` is read so only when the execution itself says nothing matched (outcome `succeeded` and
 * usage.units 0, the items returned) and the result holds no item under `list` in any form.
 */
export interface EmptyMatch<T> {
  result: T;
  list: string;
}

/**
 * Pure: turns status, headers and body text into audit facts and, only when everything fits the
 * spec, a typed result. `path` is the operation path the request went to, for messages.
 */
export function readAnswer<R extends z.ZodType>(
  resultSchema: R,
  httpStatus: number,
  retryAfterHeader: string | null,
  bodyText: string,
  nowMs: number,
  path: string | null = null,
  empty: EmptyMatch<z.infer<R>> | null = null,
): ReadAnswer<z.infer<R>> {
  let json: unknown = undefined;
  let problem: string | null = null;
  try {
    json = bodyText.length > 0 ? JSON.parse(bodyText) : undefined;
    // Strings PostgreSQL cannot hold are replaced before anything reads them (domain/text.ts).
    if (UNSTORABLE_ESCAPE.test(bodyText)) json = storableJson(json);
  } catch (e) {
    problem = `body is not JSON: ${(e as Error).message}`;
  }
  const readable = readableSchema.safeParse(json ?? {});
  const facts = problem !== null ? salvageExecution(bodyText) : readable.success ? readable.data : {};
  const execution = facts.data?.execution;
  let result: z.infer<R> | null = null;
  if (problem === null) {
    const parsed = envelope.safeParse(json);
    const typed = parsed.success ? resultSchema.safeParse(parsed.data.data.result) : null;
    const nothing =
      empty !== null &&
      execution?.outcome === 'succeeded' &&
      execution.usage?.units === 0 &&
      holdsNothing(parsed.data?.data.result, empty.list);
    if (!parsed.success) problem = `answer does not fit the spec: ${describeIssues(parsed.error)}`;
    else if (typed?.success) result = typed.data as z.infer<R>;
    // A copy: a worker empties each answer's event list once it is used.
    else if (nothing) result = structuredClone(empty.result);
    else problem = `result does not fit the spec: ${typed ? describeIssues(typed.error) : ''}`;
  }
  const outcome = execution?.outcome ?? null;
  const kind = classifyAttempt({ httpStatus, outcome, bodyValid: result !== null, message: facts.message ?? null });
  // The audit stores these facts: a body that was not JSON (salvaged) may still hold what PostgreSQL cannot.
  const described =
    kind === null ? null : describeProblem(kind, problem, facts.message ?? null, httpStatus, outcome, path);
  return {
    httpStatus,
    code: facts.code ?? null,
    message: storableOrNull(facts.message ?? null),
    outcome: storableOrNull(outcome),
    units: execution?.usage?.units ?? null,
    executionId: storableOrNull(execution?.id ?? null),
    invocationId: storableOrNull(execution?.invocation_id ?? null),
    result: kind === null ? result : null,
    problem: storableOrNull(described),
    retryAfterMs: parseRetryAfterMs(retryAfterHeader, nowMs),
    kind,
  };
}

/**
 * A 404 without an execution means no operation ran at that path: the base URL or path is wrong,
 * and saying "parameters" alone would send the operator to check the wrong thing.
 */
function notFoundProblem(path: string | null, message: string | null): string {
  const said = message === null ? '' : ` (it said: ${message})`;
  return (
    `the gateway answered 404 Not Found for ${path ?? 'the operation path'}${said}: ` +
    'no such operation there; check GATEWAY_BASE_URL'
  );
}

/** The gateway's own message explains a refusal best; a schema problem explains a broken answer. */
function describeProblem(
  kind: string,
  problem: string | null,
  message: string | null,
  status: number,
  outcome: string | null,
  path: string | null,
): string {
  if (status === 404 && outcome === null) return notFoundProblem(path, message);
  const fallback = `HTTP ${status}, outcome ${outcome ?? 'absent'}`;
  if (kind === 'invalid_response') return problem ?? message ?? fallback;
  return message ?? problem ?? fallback;
}
