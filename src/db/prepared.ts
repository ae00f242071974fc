/**
 * The statements every gateway call runs, rendered once. drizzle builds each with placeholders
 * where its values go; every run sends the same text with only its values, so that this process
 * does not render it again (drizzle's rendering was a tenth of a worker's CPU and allocations).
 * The statements stay unnamed: PostgreSQL plans each run with its values, where the generic plan a
 * named statement gets after five runs doubled the database's CPU per answer (measured).
 */
import { fillPlaceholders, sql, type SQL } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from './connection.js';
import { schema } from './schema.js';

/** Each field a value, or the SQL that stands for it (a placeholder, an expression of the statement). */
export type Bound<T> = { [K in keyof T]: T[K] | SQL };

/** Builds statements without a connection, only to render them. */
export const renderer = drizzle.mock({ schema });

/** The value named `name`, filled in at each run (sent as the driver sends it: objects as JSON text). */
export const slot = (name: string): SQL => sql`${sql.placeholder(name)}`;

/** Every key of `keys` as a slot of its own name. */
export function slots<K extends string>(keys: readonly K[]): Record<K, SQL> {
  return Object.fromEntries(keys.map((k) => [k, slot(k)])) as Record<K, SQL>;
}

export interface Prepared<V extends Record<string, unknown>> {
  rows<R>(db: Db, values: V): Promise<R[]>;
}

/** `build` runs once, at the first run: the text and its parameters are kept, the values filled in per run. */
export function prepared<V extends Record<string, unknown>>(build: () => SQL): Prepared<V> {
  let query: { sql: string; params: unknown[] } | null = null;
  return {
    async rows<R>(db: Db, values: V): Promise<R[]> {
      query ??= new PgDialect().sqlToQuery(build());
      const result = await db.$client.query({ text: query.sql, values: fillPlaceholders(query.params, values) });
      return result.rows as R[];
    },
  };
}
