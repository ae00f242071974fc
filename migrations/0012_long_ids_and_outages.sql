-- An id longer than an index entry holds (the spec sets no length) is stored as its digest
-- (`sha256:` and hex) in "id", and as sent in "full_id"; every other row has a null "full_id".
-- IF NOT EXISTS: a database that ran an earlier draft of this migration is migrated all the same.
ALTER TABLE "countries" ADD COLUMN IF NOT EXISTS "full_id" text;--> statement-breakpoint
ALTER TABLE "earthquake_events" ADD COLUMN IF NOT EXISTS "full_id" text;--> statement-breakpoint
ALTER TABLE "indicators" ADD COLUMN IF NOT EXISTS "full_id" text;--> statement-breakpoint
-- When a partition's failures since its last answer began: a gateway away for less than
-- GATEWAY_OUTAGE_GRACE_MS is waited out, not counted against the window.
ALTER TABLE "ingest_partitions" ADD COLUMN IF NOT EXISTS "failing_since" timestamp with time zone;
--> statement-breakpoint
-- The current catalog's view shows the id as the catalog gives it; "event_key" is what
-- earthquake_revisions.event_id and earthquake_events.id hold (the same for every id that fits).
CREATE OR REPLACE VIEW "earthquakes" AS
SELECT
  coalesce(e.full_id, e.id) AS id,
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
  e.revised_at,
  e.id AS event_key
FROM "earthquake_events" e
WHERE e.deleted_at IS NULL;
