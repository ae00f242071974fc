import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { PARTITION_STATE, PARTITION_STATES } from '../domain/partition.js';
import { OPERATION_NAMES } from '../domain/spec.js';

const tz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Audit: one row per HTTP attempt, failures and transport errors included. A row is written
 * before its request is sent and completed with the answer: while `finished_at` is null the
 * attempt is in flight, and one that never got its answer recorded (a crash, a kill) stays
 * visible with `billed` null (unknown). Rows roll up into gateway_cost_rollup past retention.
 */
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
    /** null: unknown (the answer was never recorded). */
    billed: boolean('billed'),
    units: doublePrecision('units'),
    executionId: text('execution_id'),
    invocationId: text('invocation_id'),
    errorKind: text('error_kind'),
    errorDetail: text('error_detail'),
    truncated: boolean('truncated'),
    rowsWritten: integer('rows_written'),
    startedAt: tz('started_at').notNull(),
    finishedAt: tz('finished_at'),
    durationMs: integer('duration_ms'),
    /** The backfill (backfills.id) the call was made for, if any. */
    backfillId: text('backfill_id'),
  },
  (t) => [
    index('gateway_executions_started_at_idx').on(t.startedAt),
    index('gateway_executions_stream_idx').on(t.streamKey, t.startedAt),
    index('gateway_executions_job_idx').on(t.jobId),
    // What a partition's calls did after a given one (the status page: what overcame an error).
    index('gateway_executions_partition_idx').on(t.streamKey, t.partitionKey, t.startedAt),
    // Plans read a stream's cap probes and samples: a few rows among every call of the stream.
    index('gateway_executions_purpose_idx')
      .on(t.streamKey, t.callPurpose)
      .where(sql`${t.callPurpose} in ('cap-probe', 'sample')`),
    // The newest failure of each stream, for `status`.
    index('gateway_executions_error_idx')
      .on(t.streamKey, t.startedAt)
      .where(sql`${t.errorKind} is not null`),
    check(
      'gateway_executions_operation_check',
      sql`${t.operation} in (${sql.raw(OPERATION_NAMES.map((o) => `'${o}'`).join(', '))})`,
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
    /** The id as the gateway sent it, where it is too long for an index and `id` holds its digest (else null). */
    fullId: text('full_id'),
    firstSeenAt: tz('first_seen_at').notNull(),
    lastSeenAt: tz('last_seen_at').notNull(),
    /** When a catalog revision last changed one of the event's fields. */
    revisedAt: tz('revised_at'),
    /** Audit row of the call that last wrote the event (no foreign key: audit rows are rolled up). */
    lastExecutionId: bigint('last_execution_id', { mode: 'number' }),
    /** Set when an answer proving its interval complete no longer held the event (never removed). */
    deletedAt: tz('deleted_at'),
    deletedExecutionId: bigint('deleted_execution_id', { mode: 'number' }),
  },
  (t) => [
    index('earthquake_events_time_idx').on(t.time),
    // What BI filters the current catalog by (the earthquakes view): strong events by magnitude and time,
    // and by area. Partial: indexes over every event, inserted at random places, made a fifty-year
    // backfill half as fast by its end (BENCHMARKS.md "Fifty years"); the few events of magnitude 4
    // and above cost nothing to index, and are what thresholds and areas are mostly asked for.
    index('earthquake_events_strong_idx')
      .on(t.magnitude, t.time)
      .where(sql`${t.magnitude} >= 4 and ${t.deletedAt} is null`),
    index('earthquake_events_strong_area_idx')
      .on(t.latitude, t.longitude)
      .where(sql`${t.magnitude} >= 4 and ${t.deletedAt} is null`),
    // `status` counts the events revised lately: a lookup, not a scan.
    index('earthquake_events_revised_idx')
      .on(t.revisedAt)
      .where(sql`${t.revisedAt} is not null`),
  ],
);

/** Every change a revision or deletion made to an event: what BI reads to see how a magnitude was revised. */
export const earthquakeRevisions = pgTable(
  'earthquake_revisions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: text('event_id').notNull(),
    /** A column of earthquake_events, or `deleted` (new value: when it was marked; null: it came back). */
    field: text('field').notNull(),
    oldValue: jsonb('old_value'),
    newValue: jsonb('new_value'),
    executionId: bigint('execution_id', { mode: 'number' }),
    revisedAt: tz('revised_at').notNull(),
  },
  (t) => [
    index('earthquake_revisions_event_idx').on(t.eventId, t.revisedAt),
    index('earthquake_revisions_at_idx').on(t.revisedAt),
  ],
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
    state: text('state').notNull().default(PARTITION_STATE.pending),
    frontier: jsonb('frontier'),
    /**
     * A first read (not a refresh): parts of the window other reads proved complete are not read
     * again. False for refreshes, and for rows a version before this column planned (they read
     * their whole window, as that version would).
     */
    skipProven: boolean('skip_proven').notNull().default(false),
    jobId: text('job_id'),
    calls: integer('calls').notNull().default(0),
    billedCalls: integer('billed_calls').notNull().default(0),
    units: doublePrecision('units').notNull().default(0),
    rowsWritten: integer('rows_written').notNull().default(0),
    /** Failed attempts since the last recorded answer: the retry budget counts these, not attempts in all. */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** When the failures since the last recorded answer began (null after an answer): how long the gateway has been away. */
    failingSince: tz('failing_since'),
    /** The backfill that last planned it (null for scheduled runs). */
    backfillId: text('backfill_id'),
    /**
     * The worker run reading it now, until `claimed_until` (renewed while it runs): a job that
     * BullMQ hands out twice (a stall, a queue lost and re-filled) never reads one window twice at once.
     */
    claimedBy: text('claimed_by'),
    claimedUntil: tz('claimed_until'),
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
      sql`${t.state} in (${sql.raw(PARTITION_STATES.map((s) => `'${s}'`).join(', '))})`,
    ),
  ],
);

/**
 * When each part of a stream's range was last proven complete: disjoint intervals per stream,
 * epoch milliseconds `[lo, hi]` for earthquake streams and years for indicator streams. Written
 * when a window or chunk finishes (db/coverage.ts); a re-read replaces the part it proves, and old
 * neighbours merge (keeping the older time), so the table stays small however often ticks run.
 */
export const coverageProofs = pgTable(
  'coverage_proofs',
  {
    streamKey: text('stream_key')
      .notNull()
      .references(() => ingestStreams.streamKey),
    lo: bigint('lo', { mode: 'number' }).notNull(),
    hi: bigint('hi', { mode: 'number' }).notNull(),
    provenAt: tz('proven_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.streamKey, t.lo] }), check('coverage_proofs_order_check', sql`${t.lo} <= ${t.hi}`)],
);

/**
 * What this product has learned about a gateway, shared by every worker process: the largest
 * answer it returned lately (a proof that its cap is at least that large, trusted for
 * GATEWAY_KNOWLEDGE_TTL_MS), when it was last probed for it, and how often each order
 * guess held (a hint for placing the next window's queries, never evidence).
 */
export const gatewayKnowledge = pgTable('gateway_knowledge', {
  gatewayKey: text('gateway_key').primaryKey(),
  capFloor: integer('cap_floor').notNull(),
  capSeenAt: tz('cap_seen_at').notNull(),
  /** The query region of the answer that set the floor: an unfiltered probe there finds at least as many events. */
  capRegionLo: bigint('cap_region_lo', { mode: 'number' }),
  capRegionHi: bigint('cap_region_hi', { mode: 'number' }),
  probedAt: tz('probed_at'),
  /** The cap as probes measured it at `probed_at` (two probes of one size): a silent cap below max_results. */
  measuredCap: integer('measured_cap'),
  /** A worker is probing the cap until then: others wait for its answer instead of paying for their own. */
  probingUntil: tz('probing_until'),
  orderStats: jsonb('order_stats').notNull(),
  /**
   * Stored events re-reads counted again, and how many more their answers held, older reads fading:
   * the share of a catalog that changed since it was stored, the prior of the next re-read's chunks.
   */
  recountStored: doublePrecision('recount_stored').notNull().default(0),
  recountAdded: doublePrecision('recount_added').notNull().default(0),
  recountedAt: tz('recounted_at'),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

export const indicators = pgTable('indicators', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The id as the gateway sent it, where it is too long for an index and `id` holds its digest (else null). */
  fullId: text('full_id'),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

export const countries = pgTable('countries', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  /** The id as the gateway sent it, where it is too long for an index and `id` holds its digest (else null). */
  fullId: text('full_id'),
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

/**
 * The indicator code a stream asks for, and the indicator id the gateway answered with (the World
 * Bank answers `ny.gdp.mktp.cd` as `NY.GDP.MKTP.CD`): how a stream finds its values.
 */
export const indicatorCodeAliases = pgTable('indicator_code_aliases', {
  requestedCode: text('requested_code').primaryKey(),
  indicatorId: text('indicator_id')
    .notNull()
    .references(() => indicators.id),
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
    lastExecutionId: bigint('last_execution_id', { mode: 'number' }),
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
    lastExecutionId: bigint('last_execution_id', { mode: 'number' }),
  },
  (t) => [
    primaryKey({ columns: [t.indicatorId, t.countryId, t.year] }),
    index('indicator_values_country_idx').on(t.countryId, t.year),
  ],
);

export const indicatorValueRevisions = pgTable(
  'indicator_value_revisions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    indicatorId: text('indicator_id').notNull(),
    countryId: text('country_id').notNull(),
    year: integer('year').notNull(),
    oldValue: doublePrecision('old_value'),
    newValue: doublePrecision('new_value'),
    /** The series' last_updated marker when the change was seen. */
    lastUpdated: text('last_updated'),
    executionId: bigint('execution_id', { mode: 'number' }),
    changedAt: tz('changed_at').notNull(),
  },
  (t) => [index('indicator_value_revisions_series_idx').on(t.indicatorId, t.countryId, t.year)],
);

/**
 * A backfill: what one `backfill` command asked for, so it can be listed, paused, resumed and
 * cancelled by its id, and held to its own budget of billed calls.
 */
export const backfills = pgTable('backfills', {
  id: text('id').primaryKey(),
  operation: text('operation').notNull(),
  description: text('description').notNull(),
  streamKeys: jsonb('stream_keys').notNull(),
  /** active | paused | cancelled (finished is derived from its partitions). */
  control: text('control').notNull().default('active'),
  maxBilledCalls: integer('max_billed_calls'),
  createdAt: tz('created_at').notNull().defaultNow(),
  updatedAt: tz('updated_at').notNull().defaultNow(),
});

/**
 * Billed-call budgets, counted where every worker sees them: `scope` is `day` (BILLED_CALLS_PER_DAY,
 * per UTC `day`) or `backfill:<id>` (day 1970-01-01). A call reserves one before it is sent, and
 * gives it back when the answer turns out unbilled.
 */
export const budgetCounters = pgTable(
  'budget_counters',
  {
    scope: text('scope').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    calls: integer('calls').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.scope, t.day] })],
);

/** Audit rows past AUDIT_RETENTION_DAYS, rolled up per UTC day, operation and stream before deletion. */
export const gatewayCostRollup = pgTable(
  'gateway_cost_rollup',
  {
    day: date('day', { mode: 'string' }).notNull(),
    operation: text('operation').notNull(),
    streamKey: text('stream_key').notNull(),
    calls: integer('calls').notNull(),
    billedCalls: integer('billed_calls').notNull(),
    billedUnknown: integer('billed_unknown').notNull(),
    units: doublePrecision('units').notNull(),
    failuresByKind: jsonb('failures_by_kind').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.operation, t.streamKey] })],
);

/**
 * Maintained roll-ups: written by triggers on earthquake_events, ingest_streams and
 * gateway_executions (migrations/0008) in the statement that changes their rows, so that status,
 * metrics, plans and BI read days instead of events or calls. Never written by the application.
 */

/** Per stream and UTC day: the stored events its filters match, live and marked deleted. */
export const earthquakeStreamDays = pgTable(
  'earthquake_stream_days',
  {
    streamKey: text('stream_key')
      .notNull()
      .references(() => ingestStreams.streamKey, { onDelete: 'cascade' }),
    day: date('day', { mode: 'string' }).notNull(),
    events: integer('events').notNull().default(0),
    deleted: integer('deleted').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.streamKey, t.day] }),
    // status sums a stream's deleted events: the days holding any, not every day of decades.
    index('earthquake_stream_days_deleted_idx')
      .on(t.streamKey, t.day)
      .where(sql`${t.deleted} > 0`),
  ],
);

/** The whole stored catalog per UTC day (events not marked deleted), by magnitude band, with its strongest event. */
export const earthquakeDays = pgTable('earthquake_days', {
  day: date('day', { mode: 'string' }).primaryKey(),
  events: integer('events').notNull().default(0),
  deleted: integer('deleted').notNull().default(0),
  tsunami: integer('tsunami').notNull().default(0),
  magUnknown: integer('mag_unknown').notNull().default(0),
  magBelow1: integer('mag_below_1').notNull().default(0),
  mag1: integer('mag_1').notNull().default(0),
  mag2: integer('mag_2').notNull().default(0),
  mag3: integer('mag_3').notNull().default(0),
  mag4: integer('mag_4').notNull().default(0),
  mag5: integer('mag_5').notNull().default(0),
  mag6: integer('mag_6').notNull().default(0),
  mag7Plus: integer('mag_7_plus').notNull().default(0),
  strongestId: text('strongest_id'),
  strongestMagnitude: doublePrecision('strongest_magnitude'),
  strongestTime: tz('strongest_time'),
  strongestPlace: text('strongest_place'),
});

/** The audit rows still kept, per UTC day, operation, stream ('' for none) and error kind ('' for none). */
export const gatewayCostDays = pgTable(
  'gateway_cost_days',
  {
    day: date('day', { mode: 'string' }).notNull(),
    operation: text('operation').notNull(),
    streamKey: text('stream_key').notNull(),
    errorKind: text('error_kind').notNull(),
    calls: integer('calls').notNull().default(0),
    billedCalls: integer('billed_calls').notNull().default(0),
    billedUnknown: integer('billed_unknown').notNull().default(0),
    units: doublePrecision('units').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.streamKey, t.day, t.operation, t.errorKind] })],
);

export const schema = {
  coverageProofs,
  gatewayExecutions,
  gatewayKnowledge,
  earthquakeRevisions,
  indicatorValueRevisions,
  backfills,
  budgetCounters,
  gatewayCostRollup,
  earthquakeStreamDays,
  earthquakeDays,
  gatewayCostDays,
  earthquakeEvents,
  ingestStreams,
  ingestPartitions,
  indicators,
  countries,
  countryCodeAliases,
  indicatorSeries,
  indicatorValues,
};
