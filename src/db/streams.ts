import { sql } from 'drizzle-orm';
import type { StreamIdentity } from '../domain/streams.js';
import type { Db } from './connection.js';
import { ingestStreams } from './schema.js';

export async function upsertStream(db: Db, s: StreamIdentity, name: string | null = null): Promise<void> {
  await db
    .insert(ingestStreams)
    .values({ streamKey: s.streamKey, operation: s.operation, params: s.params, name })
    .onConflictDoUpdate({
      target: ingestStreams.streamKey,
      set: { name: sql`coalesce(excluded.name, ${ingestStreams.name})` },
    });
}
