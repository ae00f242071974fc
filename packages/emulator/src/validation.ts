import type { z } from 'zod';

export type Validated<T> = { ok: true; value: T } | { ok: false; message: string };

/** `invocation_id` is the gateway's to write (spec 2.2, 4.1 rule 2): drop it before strict checks. */
export function stripInvocationId(body: unknown): { body: unknown; hadInvocationId: boolean } {
  if (!isPlainObject(body) || !Object.hasOwn(body, 'invocation_id')) return { body, hadInvocationId: false };
  const { invocation_id: _dropped, ...rest } = body;
  return { body: rest, hadInvocationId: true };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every issue as `<field>: <reason>`, joined by `; `, so a client can show it as it comes. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], body: unknown): string {
  const parts = issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${k}: unknown field`);
    const field = issue.path.map(String).join('.');
    if (field === '') return [`body: ${issue.code === 'invalid_type' ? 'must be a JSON object' : issue.message}`];
    const top = String(issue.path[0]);
    if (issue.code === 'invalid_type' && isPlainObject(body) && !Object.hasOwn(body, top))
      return [`${field}: is required`];
    return [`${field}: ${issue.message}`];
  });
  return parts.join('; ');
}

export function validate<S extends z.ZodType>(schema: S, body: unknown): Validated<z.infer<S>> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, message: formatIssues(parsed.error.issues, body) };
}
