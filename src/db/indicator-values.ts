import { and, eq, inArray, sql } from 'drizzle-orm';
import type { AttemptRecord } from '../gateway/attempt.js';
import type { IndicatorResult } from '../gateway/schemas.js';
import type { Db, Tx } from './connection.js';
import {
  countries,
  countryCodeAliases,
  indicatorCodeAliases,
  indicators,
  indicatorSeries,
  indicatorValueRevisions,
  indicatorValues,
} from './schema.js';
import { recordProof } from './coverage.js';
import { PARTITION_STATE } from '../domain/partition.js';
import { commitAnswer } from './answers.js';
import type { CallContext } from './audit.js';

/**
 * Row mapping, pure: years of the chunk only, one row per year, null values kept; in year order,
 * so that two answers upserting the same years lock them in one order and never deadlock.
 */
export function valueRows(
  result: IndicatorResult,
  years: { startYear: number; endYear: number },
  seenAt: Date,
  executionRowId: number,
) {
  const byYear = new Map<number, number | null>();
  for (const v of result.values ?? []) {
    if (v.year >= years.startYear && v.year <= years.endYear) byYear.set(v.year, v.value);
  }
  return [...byYear.entries()]
    .sort(([a], [b]) => a - b)
    .map(([year, value]) => ({
      indicatorId: result.indicator.id,
      countryId: result.country.id,
      year,
      value,
      firstSeenAt: seenAt,
      lastSeenAt: seenAt,
      changedAt: seenAt,
      lastExecutionId: executionRowId,
    }));
}

const v = indicatorValues;
const changed = sql`${v.value} is distinct from excluded.value`;

/** Pure: the stored values an answer changes (a new year is not a revision). */
export function valueRevisions(
  stored: ReadonlyArray<{ year: number; value: number | null }>,
  rows: ReturnType<typeof valueRows>,
) {
  const before = new Map(stored.map((r) => [r.year, r.value]));
  return rows
    .filter((r) => before.has(r.year) && before.get(r.year) !== r.value)
    .map((r) => ({ year: r.year, oldValue: before.get(r.year) ?? null, newValue: r.value }));
}

/**
 * Unchanged values keep their execution and `changed_at`; only `last_seen_at` moves. A changed
 * value (the series was revised) gets a history row with the series' `last_updated` marker.
 */
export async function upsertValues(
  tx: Tx,
  rows: ReturnType<typeof valueRows>,
  lastUpdated: string | null = null,
): Promise<number> {
  if (rows.length === 0) return 0;
  const { indicatorId, countryId, lastSeenAt, lastExecutionId } = rows[0]!;
  const stored = await tx
    .select({ year: v.year, value: v.value })
    .from(v)
    .where(
      and(
        eq(v.indicatorId, indicatorId),
        eq(v.countryId, countryId),
        inArray(
          v.year,
          rows.map((r) => r.year),
        ),
      ),
    );
  const revisions = valueRevisions(stored, rows);
  await tx
    .insert(v)
    .values(rows)
    .onConflictDoUpdate({
      target: [v.indicatorId, v.countryId, v.year],
      set: {
        lastSeenAt: sql`excluded.last_seen_at`,
        value: sql`excluded.value`,
        changedAt: sql`case when ${changed} then excluded.changed_at else ${v.changedAt} end`,
        lastExecutionId: sql`case when ${changed} then excluded.last_execution_id else ${v.lastExecutionId} end`,
      },
    });
  if (revisions.length > 0) {
    await tx.insert(indicatorValueRevisions).values(
      revisions.map((r) => ({
        indicatorId,
        countryId,
        ...r,
        lastUpdated,
        executionId: lastExecutionId,
        changedAt: lastSeenAt,
      })),
    );
  }
  return rows.length - stored.length + revisions.length;
}

async function upsertSeriesMetadata(
  tx: Tx,
  result: IndicatorResult,
  requested: { indicator: string; country: string },
  seenAt: Date,
  executionRowId: number,
) {
  await tx
    .insert(indicators)
    .values({
      id: result.indicator.id,
      name: result.indicator.name,
      fullId: result.indicator.full_id ?? null,
      updatedAt: seenAt,
    })
    .onConflictDoUpdate({
      target: indicators.id,
      set: { name: sql`excluded.name`, fullId: sql`excluded.full_id`, updatedAt: sql`excluded.updated_at` },
    });
  await tx
    .insert(indicatorCodeAliases)
    .values({
      requestedCode: requested.indicator,
      indicatorId: result.indicator.id,
      firstSeenAt: seenAt,
      lastSeenAt: seenAt,
    })
    .onConflictDoUpdate({
      target: indicatorCodeAliases.requestedCode,
      set: { indicatorId: sql`excluded.indicator_id`, lastSeenAt: sql`excluded.last_seen_at` },
    });
  await tx
    .insert(countries)
    .values({
      id: result.country.id,
      name: result.country.name,
      fullId: result.country.full_id ?? null,
      updatedAt: seenAt,
    })
    .onConflictDoUpdate({
      target: countries.id,
      set: { name: sql`excluded.name`, fullId: sql`excluded.full_id`, updatedAt: sql`excluded.updated_at` },
    });
  await tx
    .insert(countryCodeAliases)
    .values({ requestedCode: requested.country, countryId: result.country.id, firstSeenAt: seenAt, lastSeenAt: seenAt })
    .onConflictDoUpdate({
      target: countryCodeAliases.requestedCode,
      set: { countryId: sql`excluded.country_id`, lastSeenAt: sql`excluded.last_seen_at` },
    });
  await tx
    .insert(indicatorSeries)
    .values({
      indicatorId: result.indicator.id,
      countryId: result.country.id,
      lastUpdated: result.last_updated,
      firstSeenAt: seenAt,
      lastSeenAt: seenAt,
      lastExecutionId: executionRowId,
    })
    .onConflictDoUpdate({
      target: [indicatorSeries.indicatorId, indicatorSeries.countryId],
      set: {
        lastUpdated: sql`excluded.last_updated`,
        lastSeenAt: sql`excluded.last_seen_at`,
        lastExecutionId: sql`excluded.last_execution_id`,
      },
    });
}

/**
 * One answer: audit row, metadata, values and chunk state in one transaction. `asked`: the years this
 * answer was asked for (the chunk, or a run of it an earlier answer left out); `left`: the chunk's
 * progress to save (the runs still to ask), null when the chunk is read, which then records it proven.
 */
export async function recordIndicatorAnswer(
  db: Db,
  attemptId: number,
  record: AttemptRecord,
  ctx: CallContext,
  result: IndicatorResult,
  chunk: { indicator: string; country: string; startYear: number; endYear: number },
  asked: { startYear: number; endYear: number },
  left: object | null,
): Promise<{ executionRowId: number; rowsWritten: number }> {
  const writeRows = async (tx: Tx, id: number) => {
    await upsertSeriesMetadata(tx, result, chunk, record.finishedAt, id);
    const written = await upsertValues(
      tx,
      valueRows(result, asked, record.finishedAt, id),
      result.last_updated ?? null,
    );
    if (left === null)
      await recordProof(tx, ctx.streamKey, [{ lo: chunk.startYear, hi: chunk.endYear }], record.finishedAt);
    return written;
  };
  const finish = left === null ? PARTITION_STATE.done : null;
  return commitAnswer(db, attemptId, record, ctx, null, writeRows, { frontier: left, finish });
}
