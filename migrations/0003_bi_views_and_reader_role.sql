-- BI views and the read-only reader role (issue 11, item 5). README "Data for BI" documents them.
--
-- gateway_ingest_reader is a cluster-wide NOLOGIN role that operators grant to their BI users
-- (GRANT gateway_ingest_reader TO metabase;). Several databases of one server may be migrated,
-- concurrently too (every test migrates a database of its own), so it is created only when
-- missing, and a concurrent creation by another database's migration is not an error. A server
-- where the migrating user may not create roles needs it created once beforehand by a superuser:
-- CREATE ROLE gateway_ingest_reader NOLOGIN;
-- Privileges are per database: they are granted below, in every database migrated.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'gateway_ingest_reader') THEN
    BEGIN
      CREATE ROLE gateway_ingest_reader NOLOGIN;
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL; -- created meanwhile by another database's migration
      WHEN insufficient_privilege THEN
        RAISE EXCEPTION 'the role gateway_ingest_reader does not exist and % may not create roles', current_user
          USING HINT = 'create it once as a superuser: CREATE ROLE gateway_ingest_reader NOLOGIN; then run migrate again';
    END;
  END IF;
END
$$;
--> statement-breakpoint
-- The current catalog: events not deleted, plain column names.
CREATE VIEW "earthquakes" AS
SELECT
  e.id,
  e.time,
  e.magnitude,
  e.magnitude_type,
  e.place,
  e.latitude,
  e.longitude,
  e.depth_km,
  e.tsunami_flag AS tsunami,
  e.url,
  e.first_seen_at,
  e.revised_at
FROM "earthquake_events" e
WHERE e.deleted_at IS NULL;
--> statement-breakpoint
-- One row per (indicator, country, year), names joined, null values kept.
CREATE VIEW "indicator_values_by_year" AS
SELECT
  v.indicator_id,
  i.name AS indicator_name,
  v.country_id,
  c.name AS country_name,
  v.year,
  v.value,
  s.last_updated
FROM "indicator_values" v
LEFT JOIN "indicators" i ON i.id = v.indicator_id
LEFT JOIN "countries" c ON c.id = v.country_id
LEFT JOIN "indicator_series" s ON s.indicator_id = v.indicator_id AND s.country_id = v.country_id;
--> statement-breakpoint
-- One row per (indicator, country): every stored year in one jsonb object {"1960": 3.1e6, "1961": null, ...}.
CREATE VIEW "indicator_values_wide" AS
SELECT
  v.indicator_id,
  i.name AS indicator_name,
  v.country_id,
  c.name AS country_name,
  s.last_updated,
  min(v.year) AS first_year,
  max(v.year) AS last_year,
  max(v.year) FILTER (WHERE v.value IS NOT NULL) AS latest_year,
  (array_agg(v.value ORDER BY v.year DESC) FILTER (WHERE v.value IS NOT NULL))[1] AS latest_value,
  jsonb_object_agg(v.year::text, v.value) AS values_by_year
FROM "indicator_values" v
LEFT JOIN "indicators" i ON i.id = v.indicator_id
LEFT JOIN "countries" c ON c.id = v.country_id
LEFT JOIN "indicator_series" s ON s.indicator_id = v.indicator_id AND s.country_id = v.country_id
GROUP BY v.indicator_id, i.name, v.country_id, c.name, s.last_updated;
--> statement-breakpoint
-- Gateway cost per UTC day, operation and stream: the audit rows still kept, and the days already
-- rolled up. Roll-up rows win: for a (day, operation, stream) present in gateway_cost_rollup the
-- audit rows of that key are ignored (a roll-up covers its whole day and is written before the
-- audit rows are deleted, so audit rows left beside it are already counted in it). Audit rows
-- without a stream are keyed '' as in the roll-up and shown with stream_key null.
CREATE VIEW "gateway_cost_daily" AS
WITH audit_by_kind AS (
  SELECT
    (x.started_at AT TIME ZONE 'UTC')::date AS day,
    x.operation,
    coalesce(x.stream_key, '') AS stream_key,
    x.error_kind,
    count(*) AS calls,
    count(*) FILTER (WHERE x.billed) AS billed_calls,
    count(*) FILTER (WHERE x.billed IS NULL) AS billed_unknown,
    sum(x.units) FILTER (WHERE x.billed) AS units
  FROM "gateway_executions" x
  GROUP BY 1, 2, 3, 4
), audit AS (
  SELECT
    a.day,
    a.operation,
    a.stream_key,
    sum(a.calls)::int AS calls,
    sum(a.billed_calls)::int AS billed_calls,
    sum(a.billed_unknown)::int AS billed_unknown,
    coalesce(sum(a.units), 0)::float8 AS units,
    coalesce(sum(a.calls) FILTER (WHERE a.error_kind IS NOT NULL), 0)::int AS failures,
    coalesce(jsonb_object_agg(a.error_kind, a.calls) FILTER (WHERE a.error_kind IS NOT NULL), '{}'::jsonb) AS failures_by_kind
  FROM audit_by_kind a
  GROUP BY a.day, a.operation, a.stream_key
), combined AS (
  SELECT
    r.day,
    r.operation,
    r.stream_key,
    r.calls,
    r.billed_calls,
    r.billed_unknown,
    r.units,
    (SELECT coalesce(sum(k.value::numeric), 0)::int FROM jsonb_each_text(r.failures_by_kind) k) AS failures,
    r.failures_by_kind,
    'rollup'::text AS source
  FROM "gateway_cost_rollup" r
  UNION ALL
  SELECT
    a.day,
    a.operation,
    a.stream_key,
    a.calls,
    a.billed_calls,
    a.billed_unknown,
    a.units,
    a.failures,
    a.failures_by_kind,
    'audit'::text AS source
  FROM audit a
  WHERE NOT EXISTS (
    SELECT 1 FROM "gateway_cost_rollup" r
    WHERE r.day = a.day AND r.operation = a.operation AND r.stream_key = a.stream_key
  )
)
SELECT
  c.day,
  c.operation,
  nullif(c.stream_key, '') AS stream_key,
  s.name AS stream_name,
  c.calls,
  c.billed_calls,
  c.billed_unknown,
  c.units,
  c.failures,
  c.failures_by_kind,
  c.source
FROM combined c
LEFT JOIN "ingest_streams" s ON s.stream_key = c.stream_key;
--> statement-breakpoint
-- Per stream, what is ingested and what is missing in between: one row per covered range and one
-- per gap between two covered ranges. Earthquake streams: windows done or partial (a partial
-- window counts as covered except its unresolved intervals, frontier -> 'unresolved', open
-- intervals of epoch ms, which become gaps); both ends of a covered range are included, a gap is
-- the open interval between its neighbours. Indicator streams: year chunks done; both years
-- included.
CREATE VIEW "ingest_coverage" AS
WITH window_parts AS (
  SELECT
    p.stream_key,
    tstzmultirange(tstzrange(p.window_start, p.window_end, '[]'))
      - coalesce((
          SELECT range_agg(tstzrange(
            'epoch'::timestamptz + (u.value ->> 'lo')::bigint * interval '1 millisecond',
            'epoch'::timestamptz + (u.value ->> 'hi')::bigint * interval '1 millisecond',
            '()'))
          FROM jsonb_array_elements(
            CASE WHEN p.state = 'partial' AND jsonb_typeof(p.frontier -> 'unresolved') = 'array'
              THEN p.frontier -> 'unresolved' ELSE '[]'::jsonb END) u
          WHERE (u.value ->> 'lo')::bigint < (u.value ->> 'hi')::bigint
        ), '{}'::tstzmultirange) AS covered
  FROM "ingest_partitions" p
  WHERE p.operation = 'earthquake' AND p.state IN ('done', 'partial')
    AND p.window_start IS NOT NULL AND p.window_end IS NOT NULL AND p.window_start <= p.window_end
), time_cover AS (
  SELECT stream_key, range_agg(covered) AS covered FROM window_parts GROUP BY stream_key
), year_cover AS (
  SELECT p.stream_key, range_agg(int4range(p.start_year, p.end_year, '[]')) AS covered
  FROM "ingest_partitions" p
  WHERE p.operation = 'indicator' AND p.state = 'done'
    AND p.start_year IS NOT NULL AND p.end_year IS NOT NULL AND p.start_year <= p.end_year
  GROUP BY p.stream_key
)
SELECT
  t.stream_key,
  s.name AS stream_name,
  'earthquake'::text AS operation,
  k.kind,
  lower(k.r) AS from_time,
  upper(k.r) AS to_time,
  NULL::int AS from_year,
  NULL::int AS to_year
FROM time_cover t
CROSS JOIN LATERAL (
  SELECT 'covered'::text AS kind, c.r FROM unnest(t.covered) AS c(r)
  UNION ALL
  SELECT 'gap'::text, g.r FROM unnest(tstzmultirange(range_merge(t.covered)) - t.covered) AS g(r)
) k
LEFT JOIN "ingest_streams" s ON s.stream_key = t.stream_key
WHERE NOT isempty(t.covered)
UNION ALL
SELECT
  y.stream_key,
  s.name AS stream_name,
  'indicator'::text AS operation,
  k.kind,
  NULL::timestamptz AS from_time,
  NULL::timestamptz AS to_time,
  lower(k.r) AS from_year,
  upper(k.r) - 1 AS to_year
FROM year_cover y
CROSS JOIN LATERAL (
  SELECT 'covered'::text AS kind, c.r FROM unnest(y.covered) AS c(r)
  UNION ALL
  SELECT 'gap'::text, g.r FROM unnest(int4multirange(range_merge(y.covered)) - y.covered) AS g(r)
) k
LEFT JOIN "ingest_streams" s ON s.stream_key = y.stream_key;
--> statement-breakpoint
-- Read-only access for BI: the data tables and the views above, nothing else (not the audit,
-- queue, budget or knowledge bookkeeping). The views run with their owner's rights, so the
-- reader sees cost and coverage without any privilege on gateway_executions or ingest_partitions.
GRANT USAGE ON SCHEMA public TO gateway_ingest_reader;
--> statement-breakpoint
GRANT SELECT ON
  "earthquake_events", "earthquake_revisions", "indicators", "countries", "country_code_aliases",
  "indicator_series", "indicator_values", "indicator_value_revisions",
  "earthquakes", "indicator_values_by_year", "indicator_values_wide", "gateway_cost_daily", "ingest_coverage"
TO gateway_ingest_reader;
-- No ALTER DEFAULT PRIVILEGES on purpose: it cannot tell a view from a table, so it would also open
-- every future bookkeeping table. A migration adding a BI view grants SELECT on it to
-- gateway_ingest_reader itself (test/integration/bi-views.test.ts fails for a view without it).
