-- Derived state that versions before coverage proofs never wrote. A window or year chunk they
-- finished is proven coverage (for streams with no proof yet, so nothing the current version
-- proved is touched), and today's billed calls are counted from the audit, so that `status` reads
-- the same right after `migrate` as before it. Idempotent.
INSERT INTO "coverage_proofs" ("stream_key", "lo", "hi", "proven_at")
SELECT p."stream_key",
  CASE WHEN p."operation" = 'earthquake' THEN (extract(epoch FROM p."window_start") * 1000)::bigint ELSE p."start_year" END,
  CASE WHEN p."operation" = 'earthquake' THEN (extract(epoch FROM p."window_end") * 1000)::bigint ELSE p."end_year" END,
  coalesce(p."completed_at", p."updated_at")
FROM "ingest_partitions" p
WHERE p."state" = 'done'
  AND (p."window_start" IS NOT NULL OR p."start_year" IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM "coverage_proofs" c WHERE c."stream_key" = p."stream_key")
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "budget_counters" ("scope", "day", "calls")
SELECT 'day', (e."started_at" AT TIME ZONE 'UTC')::date, count(*)::int
FROM "gateway_executions" e
WHERE e."billed" = true AND e."started_at" >= (date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
GROUP BY 2
ON CONFLICT ("scope", "day") DO UPDATE SET "calls" = greatest("budget_counters"."calls", excluded."calls");
