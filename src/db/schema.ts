import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  check,
} from 'drizzle-orm/pg-core';

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Audit: one row per HTTP attempt, failures and transport errors included. */
export const gatewayExecutions = pgTable(
  'gateway_executions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    operation: text('operation').notNull(),
    streamKey: text('stream_key'),
    partitionKey: text('partition_key'),
    jobId: text('job_id'),
    attempt: integer('attempt'),
    /** Position of this call among the calls of one partition (truncation follow-ups, probes). */
    callPurpose: text('call_purpose'),
    request: jsonb('request').notNull(),
    httpStatus: integer('http_status'),
    code: integer('code'),
    message: text('message'),
    outcome: text('outcome'),
    billed: boolean('billed').notNull().default(false),
    units: doublePrecision('units'),
    executionId: text('execution_id'),
    invocationId: text('invocation_id'),
    errorKind: text('error_kind'),
    errorDetail: text('error_detail'),
    truncated: boolean('truncated'),
    rowsWritten: integer('rows_written'),
    startedAt: tz('started_at').notNull(),
    finishedAt: tz('finished_at').notNull(),
    durationMs: integer('duration_ms'),
  },
  (t) => [
    index('gateway_executions_started_at_idx').on(t.startedAt),
    index('gateway_executions_stream_idx').on(t.streamKey, t.startedAt),
    index('gateway_executions_job_idx').on(t.jobId),
    check(
      'gateway_executions_operation_check',
      sql`${t.operation} in ('earthquake', 'indicator')`,
    ),
  ],
);

export const earthquakeEvents = pgTable(
  'earthquake_events',
  {
    id: text('id').primaryKey(),
    time: tz('time').notNull(),
    magnitude: doublePrecision('magnitude'),
    magnitudeType: text('magnitude_type'),
    place: text('place'),
    latitude: doublePrecision('latitude').notNull(),
    longitude: doublePrecision('longitude').notNull(),
    depthKm: doublePrecision('depth_km'),
    tsunamiFlag: boolean('tsunami_flag').notNull(),
    url: text('url'),
    firstSeenAt: tz('first_seen_at').notNull(),
    lastSeenAt: tz('last_seen_at').notNull(),
    /** When a catalog revision last changed one of the event's fields. */
    revisedAt: tz('revised_at'),
    lastExecutionId: bigint('last_execution_id', { mode: 'number' }).references(
      () => gatewayExecutions.id,
    ),
  },
  (t) => [index('earthquake_events_time_idx').on(t.time)],
);

/** A stream is one operation with one set of filters; partitions and status hang off it. */
export const ingestStreams = pgTable('ingest_streams', {
  streamKey: text('stream_key').primaryKey(),
  operation: text('operation').notNull(),
  /** The jobs.yaml name when the stream is declared there. */
  name: text('name'),
  params: jsonb('params').notNull(),
  createdAt: tz('created_at').notNull().defaultNow(),
});

/**
 * Window (earthquake) or year chunk (indicator) state. `frontier` holds the parts of the window
 * not yet covered by an untruncated answer, so a retried job resumes instead of paying again.
 */
export const ingestPartitions = pgTable(
  'ingest_partitions',
  {
    streamKey: text('stream_key')
      .notNull()
      .references(() => ingestStreams.streamKey),
    partitionKey: text('partition_key').notNull(),
    operation: text('operation').notNull(),
    windowStart: tz('window_start'),
    windowEnd: tz('window_end'),
    startYear: integer('start_year'),
    endYear: integer('end_year'),
    state: text('state').notNull().default('pending'),
    frontier: jsonb('frontier'),
    jobId: text('job_id'),
    calls: integer('calls').notNull().default(0),
    billedCalls: integer('billed_calls').notNull().default(0),
    units: doublePrecision('units').notNull().default(0),
    rowsWritten: integer('rows_written').notNull().default(0),
    lastError: text('last_error'),
    lastErrorKind: text('last_error_kind'),
    createdAt: tz('created_at').notNull().defaultNow(),
    updatedAt: tz('updated_at').notNull().defaultNow(),
    completedAt: tz('completed_at'),
  },
  (t) => [
    primaryKey({ columns: [t.streamKey, t.partitionKey] }),
    index('ingest_partitions_state_idx').on(t.state),
    check(
      'ingest_partitions_state_check',
      sql`${t.state} in ('pending', 'running', 'done', 'failed')`,
    ),
  ],
);

export const indicators = pgTable('indicators', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

export const countries = pgTable('countries', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

/** The code a user asked for (`USA`, `WLD`) and the id the gateway answers with (`US`, `1W`). */
export const countryCodeAliases = pgTable('country_code_aliases', {
  requestedCode: text('requested_code').primaryKey(),
  countryId: text('country_id')
    .notNull()
    .references(() => countries.id),
  firstSeenAt: tz('first_seen_at').notNull(),
  lastSeenAt: tz('last_seen_at').notNull(),
});

export const indicatorSeries = pgTable(
  'indicator_series',
  {
    indicatorId: text('indicator_id')
      .notNull()
      .references(() => indicators.id),
    countryId: text('country_id')
      .notNull()
      .references(() => countries.id),
    lastUpdated: text('last_updated'),
    firstSeenAt: tz('first_seen_at').notNull(),
    lastSeenAt: tz('last_seen_at').notNull(),
    lastExecutionId: bigint('last_execution_id', { mode: 'number' }).references(
      () => gatewayExecutions.id,
    ),
  },
  (t) => [primaryKey({ columns: [t.indicatorId, t.countryId] })],
);

export const indicatorValues = pgTable(
  'indicator_values',
  {
    indicatorId: text('indicator_id').notNull(),
    countryId: text('country_id').notNull(),
    year: integer('year').notNull(),
    value: doublePrecision('value'),
    firstSeenAt: tz('first_seen_at').notNull(),
    lastSeenAt: tz('last_seen_at').notNull(),
    /** When the value last changed; unchanged re-reads move only `last_seen_at`. */
    changedAt: tz('changed_at').notNull(),
    lastExecutionId: bigint('last_execution_id', { mode: 'number' }).references(
      () => gatewayExecutions.id,
    ),
  },
  (t) => [
    primaryKey({ columns: [t.indicatorId, t.countryId, t.year] }),
    index('indicator_values_country_idx').on(t.countryId, t.year),
  ],
);

export const schema = {
  gatewayExecutions,
  earthquakeEvents,
  ingestStreams,
  ingestPartitions,
  indicators,
  countries,
  countryCodeAliases,
  indicatorSeries,
  indicatorValues,
};
