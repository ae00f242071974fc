CREATE TABLE "earthquake_days" (
	"day" date PRIMARY KEY NOT NULL,
	"events" integer DEFAULT 0 NOT NULL,
	"deleted" integer DEFAULT 0 NOT NULL,
	"tsunami" integer DEFAULT 0 NOT NULL,
	"mag_unknown" integer DEFAULT 0 NOT NULL,
	"mag_below_1" integer DEFAULT 0 NOT NULL,
	"mag_1" integer DEFAULT 0 NOT NULL,
	"mag_2" integer DEFAULT 0 NOT NULL,
	"mag_3" integer DEFAULT 0 NOT NULL,
	"mag_4" integer DEFAULT 0 NOT NULL,
	"mag_5" integer DEFAULT 0 NOT NULL,
	"mag_6" integer DEFAULT 0 NOT NULL,
	"mag_7_plus" integer DEFAULT 0 NOT NULL,
	"strongest_id" text,
	"strongest_magnitude" double precision,
	"strongest_time" timestamp with time zone,
	"strongest_place" text
);
--> statement-breakpoint
CREATE TABLE "earthquake_stream_days" (
	"stream_key" text NOT NULL,
	"day" date NOT NULL,
	"events" integer DEFAULT 0 NOT NULL,
	"deleted" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "earthquake_stream_days_stream_key_day_pk" PRIMARY KEY("stream_key","day")
);
--> statement-breakpoint
CREATE TABLE "gateway_cost_days" (
	"day" date NOT NULL,
	"operation" text NOT NULL,
	"stream_key" text NOT NULL,
	"error_kind" text NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	"billed_calls" integer DEFAULT 0 NOT NULL,
	"billed_unknown" integer DEFAULT 0 NOT NULL,
	"units" double precision DEFAULT 0 NOT NULL,
	CONSTRAINT "gateway_cost_days_stream_key_day_operation_error_kind_pk" PRIMARY KEY("stream_key","day","operation","error_kind")
);
--> statement-breakpoint
ALTER TABLE "earthquake_stream_days" ADD CONSTRAINT "earthquake_stream_days_stream_key_ingest_streams_stream_key_fk" FOREIGN KEY ("stream_key") REFERENCES "public"."ingest_streams"("stream_key") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "earthquake_events_strong_idx" ON "earthquake_events" USING btree ("magnitude","time") WHERE "earthquake_events"."magnitude" >= 4 and "earthquake_events"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "earthquake_events_strong_area_idx" ON "earthquake_events" USING btree ("latitude","longitude") WHERE "earthquake_events"."magnitude" >= 4 and "earthquake_events"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "earthquake_events_revised_idx" ON "earthquake_events" USING btree ("revised_at") WHERE "earthquake_events"."revised_at" is not null;--> statement-breakpoint
CREATE INDEX "gateway_executions_partition_idx" ON "gateway_executions" USING btree ("stream_key","partition_key","started_at");--> statement-breakpoint
CREATE INDEX "gateway_executions_purpose_idx" ON "gateway_executions" USING btree ("stream_key","call_purpose") WHERE "gateway_executions"."call_purpose" in ('cap-probe', 'sample');--> statement-breakpoint
CREATE INDEX "gateway_executions_error_idx" ON "gateway_executions" USING btree ("stream_key","started_at") WHERE "gateway_executions"."error_kind" is not null;--> statement-breakpoint
-- Maintained roll-ups (the tables above): status, /metrics, plans and BI read days, not events or
-- calls. Triggers keep them in the statement that changes the rows, whatever changes them (an
-- answer, a revision, a deletion, a manual fix), so they always equal a recount; the application
-- never writes them. Statement triggers with transition tables: one pass per statement, not per row.
--
-- Does a stream (its ingest_streams.params) keep an event? The rule of matchesFilters in
-- src/db/earthquake-events.ts: the magnitude floor of magnitudeFloor, the haversine of domain/geo.ts.
CREATE FUNCTION "gi_stream_keeps"(params jsonb, magnitude float8, latitude float8, longitude float8)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (params ->> 'min_magnitude' IS NULL
      OR magnitude >= greatest(-1, round((params ->> 'min_magnitude')::numeric - 0.000001, 7))::float8)
    AND (jsonb_typeof(params -> 'circle') IS DISTINCT FROM 'object'
      OR 2 * 6371.0088::float8 * asin(least(1, sqrt(
        power(sin(radians(latitude - (params -> 'circle' ->> 'latitude')::float8) / 2), 2)
        + cos(radians((params -> 'circle' ->> 'latitude')::float8)) * cos(radians(latitude))
          * power(sin(radians(longitude - (params -> 'circle' ->> 'longitude')::float8) / 2), 2))))
        <= (params -> 'circle' ->> 'radiusKm')::float8)
$$;
--> statement-breakpoint
-- The strongest event of a day: the largest magnitude, then the earliest, then the smallest id.
CREATE FUNCTION "gi_stronger"(m1 float8, t1 timestamptz, id1 text, m2 float8, t2 timestamptz, id2 text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT m1 IS NOT NULL AND (m2 IS NULL OR m1 > m2 OR (m1 = m2 AND (t1 < t2 OR (t1 = t2 AND id1 < id2))))
$$;
--> statement-breakpoint
-- A row version an earthquake_events statement added (sign 1) or took away (sign -1).
CREATE TYPE "gi_event_change" AS (
  id text, time timestamptz, magnitude float8, latitude float8, longitude float8, place text,
  tsunami boolean, live boolean, sign int
);
--> statement-breakpoint
CREATE FUNCTION "gi_apply_event_changes"(changes gi_event_change[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(cardinality(changes), 0) = 0 THEN RETURN; END IF;
  -- Shared with other writers; a new stream's first count (gi_stream_days_fill) takes it alone, so
  -- every event is counted for that stream either by the fill or here, never by both or neither.
  PERFORM pg_advisory_xact_lock_shared(7204118002);
  INSERT INTO earthquake_stream_days AS d (stream_key, day, events, deleted)
  SELECT g.stream_key, g.day, g.events, g.deleted FROM (
    SELECT s.stream_key, (c.time AT TIME ZONE 'UTC')::date AS day,
      coalesce(sum(c.sign) FILTER (WHERE c.live), 0)::int AS events,
      coalesce(sum(c.sign) FILTER (WHERE NOT c.live), 0)::int AS deleted
    FROM unnest(changes) c
    JOIN ingest_streams s ON s.operation = 'earthquake' AND gi_stream_keeps(s.params, c.magnitude, c.latitude, c.longitude)
    GROUP BY 1, 2) g
  WHERE g.events <> 0 OR g.deleted <> 0
  ORDER BY g.stream_key, g.day
  ON CONFLICT (stream_key, day) DO UPDATE SET events = d.events + excluded.events, deleted = d.deleted + excluded.deleted;

  INSERT INTO earthquake_days AS d (day, events, deleted, tsunami, mag_unknown, mag_below_1, mag_1, mag_2, mag_3,
    mag_4, mag_5, mag_6, mag_7_plus, strongest_id, strongest_magnitude, strongest_time, strongest_place)
  SELECT g.* FROM (
    SELECT (c.time AT TIME ZONE 'UTC')::date AS day,
      coalesce(sum(c.sign) FILTER (WHERE c.live), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE NOT c.live), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.tsunami), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude IS NULL), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude < 1), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 1 AND c.magnitude < 2), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 2 AND c.magnitude < 3), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 3 AND c.magnitude < 4), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 4 AND c.magnitude < 5), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 5 AND c.magnitude < 6), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 6 AND c.magnitude < 7), 0)::int,
      coalesce(sum(c.sign) FILTER (WHERE c.live AND c.magnitude >= 7), 0)::int,
      (array_agg(c.id ORDER BY c.magnitude DESC, c.time, c.id) FILTER (WHERE c.sign > 0 AND c.live AND c.magnitude IS NOT NULL))[1],
      (array_agg(c.magnitude ORDER BY c.magnitude DESC, c.time, c.id) FILTER (WHERE c.sign > 0 AND c.live AND c.magnitude IS NOT NULL))[1],
      (array_agg(c.time ORDER BY c.magnitude DESC, c.time, c.id) FILTER (WHERE c.sign > 0 AND c.live AND c.magnitude IS NOT NULL))[1],
      (array_agg(c.place ORDER BY c.magnitude DESC, c.time, c.id) FILTER (WHERE c.sign > 0 AND c.live AND c.magnitude IS NOT NULL))[1]
    FROM unnest(changes) c
    GROUP BY 1) g
  ORDER BY g.day
  ON CONFLICT (day) DO UPDATE SET
    events = d.events + excluded.events, deleted = d.deleted + excluded.deleted, tsunami = d.tsunami + excluded.tsunami,
    mag_unknown = d.mag_unknown + excluded.mag_unknown, mag_below_1 = d.mag_below_1 + excluded.mag_below_1,
    mag_1 = d.mag_1 + excluded.mag_1, mag_2 = d.mag_2 + excluded.mag_2, mag_3 = d.mag_3 + excluded.mag_3,
    mag_4 = d.mag_4 + excluded.mag_4, mag_5 = d.mag_5 + excluded.mag_5, mag_6 = d.mag_6 + excluded.mag_6,
    mag_7_plus = d.mag_7_plus + excluded.mag_7_plus,
    strongest_id = CASE WHEN gi_stronger(excluded.strongest_magnitude, excluded.strongest_time, excluded.strongest_id,
      d.strongest_magnitude, d.strongest_time, d.strongest_id) THEN excluded.strongest_id ELSE d.strongest_id END,
    strongest_magnitude = CASE WHEN gi_stronger(excluded.strongest_magnitude, excluded.strongest_time,
      excluded.strongest_id, d.strongest_magnitude, d.strongest_time, d.strongest_id)
      THEN excluded.strongest_magnitude ELSE d.strongest_magnitude END,
    strongest_time = CASE WHEN gi_stronger(excluded.strongest_magnitude, excluded.strongest_time, excluded.strongest_id,
      d.strongest_magnitude, d.strongest_time, d.strongest_id) THEN excluded.strongest_time ELSE d.strongest_time END,
    strongest_place = CASE WHEN gi_stronger(excluded.strongest_magnitude, excluded.strongest_time,
      excluded.strongest_id, d.strongest_magnitude, d.strongest_time, d.strongest_id)
      THEN excluded.strongest_place ELSE d.strongest_place END;

  -- A day whose strongest event changed or went away is searched again. A separate statement, run
  -- after the one above locked the day's row: it sees every other writer of that day committed.
  -- Found by the day's key: a first read, which takes nothing away, does not touch the table at all.
  IF EXISTS (SELECT 1 FROM unnest(changes) c WHERE c.sign < 0) THEN
    UPDATE earthquake_days d SET (strongest_id, strongest_magnitude, strongest_time, strongest_place) = (
      SELECT e.id, e.magnitude, e.time, e.place FROM earthquake_events e
      WHERE e.time >= (d.day::timestamp AT TIME ZONE 'UTC') AND e.time < ((d.day + 1)::timestamp AT TIME ZONE 'UTC')
        AND e.deleted_at IS NULL AND e.magnitude IS NOT NULL
      ORDER BY e.magnitude DESC, e.time, e.id LIMIT 1)
    FROM (SELECT DISTINCT (c.time AT TIME ZONE 'UTC')::date AS day, c.id FROM unnest(changes) c WHERE c.sign < 0) x
    WHERE d.day = x.day AND d.strongest_id = x.id;
  END IF;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "gi_earthquake_events_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Each branch names only the transition tables its event has.
  IF TG_OP = 'INSERT' THEN
    PERFORM gi_apply_event_changes(ARRAY(SELECT ROW(n.id, n.time, n.magnitude, n.latitude, n.longitude, n.place,
      n.tsunami_flag, n.deleted_at IS NULL, 1)::gi_event_change FROM gi_new n));
  ELSIF TG_OP = 'UPDATE' THEN
    -- Only rows whose counted fields changed: a re-read that confirms its events costs a join, no write.
    PERFORM gi_apply_event_changes(ARRAY(
      SELECT ROW(v.id, v.time, v.magnitude, v.latitude, v.longitude, v.place, v.tsunami_flag, v.live, v.sign)::gi_event_change
      FROM gi_old o JOIN gi_new n USING (id)
      CROSS JOIN LATERAL (VALUES
        (o.id, o.time, o.magnitude, o.latitude, o.longitude, o.place, o.tsunami_flag, o.deleted_at IS NULL, -1),
        (n.id, n.time, n.magnitude, n.latitude, n.longitude, n.place, n.tsunami_flag, n.deleted_at IS NULL, 1))
        AS v(id, time, magnitude, latitude, longitude, place, tsunami_flag, live, sign)
      WHERE (o.time, o.magnitude, o.latitude, o.longitude, o.place, o.tsunami_flag, o.deleted_at IS NULL)
        IS DISTINCT FROM (n.time, n.magnitude, n.latitude, n.longitude, n.place, n.tsunami_flag, n.deleted_at IS NULL)));
  ELSE
    PERFORM gi_apply_event_changes(ARRAY(SELECT ROW(o.id, o.time, o.magnitude, o.latitude, o.longitude, o.place,
      o.tsunami_flag, o.deleted_at IS NULL, -1)::gi_event_change FROM gi_old o));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "earthquake_events_inserted" AFTER INSERT ON "earthquake_events"
  REFERENCING NEW TABLE AS gi_new FOR EACH STATEMENT EXECUTE FUNCTION gi_earthquake_events_changed();
--> statement-breakpoint
CREATE TRIGGER "earthquake_events_updated" AFTER UPDATE ON "earthquake_events"
  REFERENCING OLD TABLE AS gi_old NEW TABLE AS gi_new FOR EACH STATEMENT EXECUTE FUNCTION gi_earthquake_events_changed();
--> statement-breakpoint
CREATE TRIGGER "earthquake_events_deleted" AFTER DELETE ON "earthquake_events"
  REFERENCING OLD TABLE AS gi_old FOR EACH STATEMENT EXECUTE FUNCTION gi_earthquake_events_changed();
--> statement-breakpoint
-- TRUNCATE fires no delete trigger: the roll-ups are emptied with the table.
CREATE FUNCTION "gi_earthquake_events_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM earthquake_stream_days;
  DELETE FROM earthquake_days;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "earthquake_events_truncated" AFTER TRUNCATE ON "earthquake_events"
  FOR EACH STATEMENT EXECUTE FUNCTION gi_earthquake_events_truncated();
--> statement-breakpoint
-- A new earthquake stream counts the events already stored, alone (see gi_apply_event_changes).
CREATE FUNCTION "gi_stream_days_fill"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.operation <> 'earthquake' THEN RETURN NULL; END IF;
  PERFORM pg_advisory_xact_lock(7204118002);
  INSERT INTO earthquake_stream_days (stream_key, day, events, deleted)
  SELECT NEW.stream_key, (e.time AT TIME ZONE 'UTC')::date,
    count(*) FILTER (WHERE e.deleted_at IS NULL), count(*) FILTER (WHERE e.deleted_at IS NOT NULL)
  FROM earthquake_events e WHERE gi_stream_keeps(NEW.params, e.magnitude, e.latitude, e.longitude)
  GROUP BY 2;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "ingest_streams_inserted" AFTER INSERT ON "ingest_streams"
  FOR EACH ROW EXECUTE FUNCTION gi_stream_days_fill();
--> statement-breakpoint
-- An audit row version a gateway_executions statement added (sign 1) or took away (sign -1).
CREATE TYPE "gi_call_change" AS (
  day date, operation text, stream_key text, error_kind text, billed boolean, units float8, sign int
);
--> statement-breakpoint
CREATE FUNCTION "gi_apply_call_changes"(changes gi_call_change[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO gateway_cost_days AS d (stream_key, day, operation, error_kind, calls, billed_calls, billed_unknown, units)
  SELECT g.* FROM (
    SELECT c.stream_key, c.day, c.operation, c.error_kind, sum(c.sign)::int AS calls,
      coalesce(sum(c.sign) FILTER (WHERE c.billed), 0)::int AS billed_calls,
      coalesce(sum(c.sign) FILTER (WHERE c.billed IS NULL), 0)::int AS billed_unknown,
      coalesce(sum(c.sign * c.units) FILTER (WHERE c.billed), 0)::float8 AS units
    FROM unnest(changes) c GROUP BY 1, 2, 3, 4) g
  WHERE g.calls <> 0 OR g.billed_calls <> 0 OR g.billed_unknown <> 0 OR g.units <> 0
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (stream_key, day, operation, error_kind) DO UPDATE SET calls = d.calls + excluded.calls,
    billed_calls = d.billed_calls + excluded.billed_calls, billed_unknown = d.billed_unknown + excluded.billed_unknown,
    units = d.units + excluded.units;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "gi_gateway_executions_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM gi_apply_call_changes(ARRAY(SELECT ROW((n.started_at AT TIME ZONE 'UTC')::date, n.operation,
      coalesce(n.stream_key, ''), coalesce(n.error_kind, ''), n.billed, n.units, 1)::gi_call_change FROM gi_new n));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM gi_apply_call_changes(ARRAY(
      SELECT ROW((v.started_at AT TIME ZONE 'UTC')::date, v.operation, coalesce(v.stream_key, ''),
        coalesce(v.error_kind, ''), v.billed, v.units, v.sign)::gi_call_change
      FROM gi_old o JOIN gi_new n USING (id)
      CROSS JOIN LATERAL (VALUES
        (o.started_at, o.operation, o.stream_key, o.error_kind, o.billed, o.units, -1),
        (n.started_at, n.operation, n.stream_key, n.error_kind, n.billed, n.units, 1))
        AS v(started_at, operation, stream_key, error_kind, billed, units, sign)
      WHERE (o.started_at, o.operation, o.stream_key, o.error_kind, o.billed, o.units)
        IS DISTINCT FROM (n.started_at, n.operation, n.stream_key, n.error_kind, n.billed, n.units)));
  ELSE
    PERFORM gi_apply_call_changes(ARRAY(SELECT ROW((o.started_at AT TIME ZONE 'UTC')::date, o.operation,
      coalesce(o.stream_key, ''), coalesce(o.error_kind, ''), o.billed, o.units, -1)::gi_call_change FROM gi_old o));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "gateway_executions_inserted" AFTER INSERT ON "gateway_executions"
  REFERENCING NEW TABLE AS gi_new FOR EACH STATEMENT EXECUTE FUNCTION gi_gateway_executions_changed();
--> statement-breakpoint
CREATE TRIGGER "gateway_executions_updated" AFTER UPDATE ON "gateway_executions"
  REFERENCING OLD TABLE AS gi_old NEW TABLE AS gi_new FOR EACH STATEMENT EXECUTE FUNCTION gi_gateway_executions_changed();
--> statement-breakpoint
CREATE TRIGGER "gateway_executions_deleted" AFTER DELETE ON "gateway_executions"
  REFERENCING OLD TABLE AS gi_old FOR EACH STATEMENT EXECUTE FUNCTION gi_gateway_executions_changed();
--> statement-breakpoint
CREATE FUNCTION "gi_gateway_executions_truncated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM gateway_cost_days;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "gateway_executions_truncated" AFTER TRUNCATE ON "gateway_executions"
  FOR EACH STATEMENT EXECUTE FUNCTION gi_gateway_executions_truncated();
--> statement-breakpoint
-- What earlier versions stored, counted once (the triggers above already hold the tables' locks).
INSERT INTO earthquake_stream_days (stream_key, day, events, deleted)
SELECT s.stream_key, (e.time AT TIME ZONE 'UTC')::date,
  count(*) FILTER (WHERE e.deleted_at IS NULL), count(*) FILTER (WHERE e.deleted_at IS NOT NULL)
FROM ingest_streams s JOIN earthquake_events e
  ON s.operation = 'earthquake' AND gi_stream_keeps(s.params, e.magnitude, e.latitude, e.longitude)
GROUP BY 1, 2;
--> statement-breakpoint
INSERT INTO earthquake_days (day, events, deleted, tsunami, mag_unknown, mag_below_1, mag_1, mag_2, mag_3, mag_4,
  mag_5, mag_6, mag_7_plus, strongest_id, strongest_magnitude, strongest_time, strongest_place)
SELECT (e.time AT TIME ZONE 'UTC')::date,
  count(*) FILTER (WHERE e.deleted_at IS NULL),
  count(*) FILTER (WHERE e.deleted_at IS NOT NULL),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.tsunami_flag),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude IS NULL),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude < 1),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 1 AND e.magnitude < 2),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 2 AND e.magnitude < 3),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 3 AND e.magnitude < 4),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 4 AND e.magnitude < 5),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 5 AND e.magnitude < 6),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 6 AND e.magnitude < 7),
  count(*) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude >= 7),
  (array_agg(e.id ORDER BY e.magnitude DESC, e.time, e.id) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude IS NOT NULL))[1],
  (array_agg(e.magnitude ORDER BY e.magnitude DESC, e.time, e.id) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude IS NOT NULL))[1],
  (array_agg(e.time ORDER BY e.magnitude DESC, e.time, e.id) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude IS NOT NULL))[1],
  (array_agg(e.place ORDER BY e.magnitude DESC, e.time, e.id) FILTER (WHERE e.deleted_at IS NULL AND e.magnitude IS NOT NULL))[1]
FROM earthquake_events e GROUP BY 1;
--> statement-breakpoint
INSERT INTO gateway_cost_days (stream_key, day, operation, error_kind, calls, billed_calls, billed_unknown, units)
SELECT coalesce(x.stream_key, ''), (x.started_at AT TIME ZONE 'UTC')::date, x.operation, coalesce(x.error_kind, ''),
  count(*), count(*) FILTER (WHERE x.billed), count(*) FILTER (WHERE x.billed IS NULL),
  coalesce(sum(x.units) FILTER (WHERE x.billed), 0)
FROM gateway_executions x GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
-- The catalog per UTC day, from the maintained roll-up: a row per day holding events, even at fifty years.
CREATE VIEW "earthquakes_daily" AS
SELECT d.day, d.events, d.tsunami AS tsunami_events, d.mag_unknown AS events_magnitude_unknown,
  d.mag_below_1 AS events_below_m1, d.mag_1 AS events_m1, d.mag_2 AS events_m2, d.mag_3 AS events_m3,
  d.mag_4 AS events_m4, d.mag_5 AS events_m5, d.mag_6 AS events_m6, d.mag_7_plus AS events_m7_plus,
  d.strongest_magnitude AS max_magnitude, d.strongest_id, d.strongest_time, d.strongest_place,
  d.deleted AS deleted_events
FROM "earthquake_days" d
WHERE d.events <> 0 OR d.deleted <> 0;
--> statement-breakpoint
-- The catalog per UTC month, summed from the daily roll-up (about 600 rows for fifty years).
CREATE VIEW "earthquakes_monthly" AS
SELECT date_trunc('month', d.day)::date AS month, sum(d.events)::int AS events,
  sum(d.tsunami)::int AS tsunami_events, sum(d.mag_unknown)::int AS events_magnitude_unknown,
  sum(d.mag_below_1)::int AS events_below_m1, sum(d.mag_1)::int AS events_m1, sum(d.mag_2)::int AS events_m2,
  sum(d.mag_3)::int AS events_m3, sum(d.mag_4)::int AS events_m4, sum(d.mag_5)::int AS events_m5,
  sum(d.mag_6)::int AS events_m6, sum(d.mag_7_plus)::int AS events_m7_plus,
  max(d.strongest_magnitude) AS max_magnitude,
  (array_agg(d.strongest_id ORDER BY d.strongest_magnitude DESC, d.strongest_time, d.strongest_id)
    FILTER (WHERE d.strongest_magnitude IS NOT NULL))[1] AS strongest_id,
  (array_agg(d.strongest_time ORDER BY d.strongest_magnitude DESC, d.strongest_time, d.strongest_id)
    FILTER (WHERE d.strongest_magnitude IS NOT NULL))[1] AS strongest_time,
  (array_agg(d.strongest_place ORDER BY d.strongest_magnitude DESC, d.strongest_time, d.strongest_id)
    FILTER (WHERE d.strongest_magnitude IS NOT NULL))[1] AS strongest_place,
  sum(d.deleted)::int AS deleted_events
FROM "earthquake_days" d
WHERE d.events <> 0 OR d.deleted <> 0
GROUP BY 1;
--> statement-breakpoint
-- As before, now over the maintained gateway_cost_days instead of every audit row: a (day,
-- operation, stream) present in gateway_cost_rollup is taken from the roll-up alone.
DROP VIEW "gateway_cost_daily";
--> statement-breakpoint
CREATE VIEW "gateway_cost_daily" AS
WITH audit AS (
  SELECT a.day, a.operation, a.stream_key,
    sum(a.calls)::int AS calls,
    sum(a.billed_calls)::int AS billed_calls,
    sum(a.billed_unknown)::int AS billed_unknown,
    coalesce(sum(a.units), 0)::float8 AS units,
    coalesce(sum(a.calls) FILTER (WHERE a.error_kind <> ''), 0)::int AS failures,
    coalesce(jsonb_object_agg(a.error_kind, a.calls) FILTER (WHERE a.error_kind <> '' AND a.calls <> 0), '{}'::jsonb)
      AS failures_by_kind
  FROM "gateway_cost_days" a
  GROUP BY a.day, a.operation, a.stream_key
  HAVING sum(a.calls) <> 0
), combined AS (
  SELECT r.day, r.operation, r.stream_key, r.calls, r.billed_calls, r.billed_unknown, r.units,
    (SELECT coalesce(sum(k.value::numeric), 0)::int FROM jsonb_each_text(r.failures_by_kind) k) AS failures,
    r.failures_by_kind, 'rollup'::text AS source
  FROM "gateway_cost_rollup" r
  UNION ALL
  SELECT a.day, a.operation, a.stream_key, a.calls, a.billed_calls, a.billed_unknown, a.units, a.failures,
    a.failures_by_kind, 'audit'::text AS source
  FROM audit a
  WHERE NOT EXISTS (
    SELECT 1 FROM "gateway_cost_rollup" r
    WHERE r.day = a.day AND r.operation = a.operation AND r.stream_key = a.stream_key
  )
)
SELECT c.day, c.operation, nullif(c.stream_key, '') AS stream_key, s.name AS stream_name, c.calls, c.billed_calls,
  c.billed_unknown, c.units, c.failures, c.failures_by_kind, c.source
FROM combined c
LEFT JOIN "ingest_streams" s ON s.stream_key = c.stream_key;
--> statement-breakpoint
-- Gateway cost per UTC month, operation and stream, summed from the daily view.
CREATE VIEW "gateway_cost_monthly" AS
SELECT date_trunc('month', c.day)::date AS month, c.operation, c.stream_key, c.stream_name,
  sum(c.calls)::int AS calls, sum(c.billed_calls)::int AS billed_calls, sum(c.billed_unknown)::int AS billed_unknown,
  sum(c.units)::float8 AS units, sum(c.failures)::int AS failures
FROM "gateway_cost_daily" c
GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
GRANT SELECT ON "earthquakes_daily", "earthquakes_monthly", "gateway_cost_daily", "gateway_cost_monthly"
TO gateway_ingest_reader;
