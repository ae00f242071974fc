CREATE TABLE "coverage_proofs" (
	"stream_key" text NOT NULL,
	"lo" bigint NOT NULL,
	"hi" bigint NOT NULL,
	"proven_at" timestamp with time zone NOT NULL,
	CONSTRAINT "coverage_proofs_stream_key_lo_pk" PRIMARY KEY("stream_key","lo"),
	CONSTRAINT "coverage_proofs_order_check" CHECK ("coverage_proofs"."lo" <= "coverage_proofs"."hi")
);
--> statement-breakpoint
ALTER TABLE "coverage_proofs" ADD CONSTRAINT "coverage_proofs_stream_key_ingest_streams_stream_key_fk" FOREIGN KEY ("stream_key") REFERENCES "public"."ingest_streams"("stream_key") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- ingest_coverage now reads when each part was last proven complete, rather than partition states.
DROP VIEW IF EXISTS "ingest_coverage";
--> statement-breakpoint
CREATE VIEW "ingest_coverage" AS
WITH proofs AS (
  SELECT p.stream_key, s.name AS stream_name, s.operation, p.lo, p.hi, p.proven_at
  FROM "coverage_proofs" p
  JOIN "ingest_streams" s ON s.stream_key = p.stream_key
), time_cover AS (
  SELECT stream_key, stream_name,
    range_agg(tstzrange(to_timestamp(lo / 1000.0), to_timestamp(hi / 1000.0), '[]')) AS covered
  FROM proofs WHERE operation = 'earthquake' GROUP BY stream_key, stream_name
), year_cover AS (
  SELECT stream_key, stream_name, range_agg(int4range(lo::int, hi::int, '[]')) AS covered
  FROM proofs WHERE operation = 'indicator' GROUP BY stream_key, stream_name
)
SELECT stream_key, stream_name, operation, 'covered'::text AS kind,
  CASE WHEN operation = 'earthquake' THEN to_timestamp(lo / 1000.0) END AS from_time,
  CASE WHEN operation = 'earthquake' THEN to_timestamp(hi / 1000.0) END AS to_time,
  CASE WHEN operation = 'indicator' THEN lo::int END AS from_year,
  CASE WHEN operation = 'indicator' THEN hi::int END AS to_year,
  proven_at
FROM proofs
UNION ALL
SELECT t.stream_key, t.stream_name, 'earthquake'::text, 'gap'::text, lower(g.r), upper(g.r), NULL::int, NULL::int, NULL::timestamptz
FROM time_cover t
CROSS JOIN LATERAL unnest(tstzmultirange(range_merge(t.covered)) - t.covered) AS g(r)
UNION ALL
SELECT y.stream_key, y.stream_name, 'indicator'::text, 'gap'::text, NULL::timestamptz, NULL::timestamptz, lower(g.r), upper(g.r) - 1, NULL::timestamptz
FROM year_cover y
CROSS JOIN LATERAL unnest(int4multirange(range_merge(y.covered)) - y.covered) AS g(r);
--> statement-breakpoint
GRANT SELECT ON "ingest_coverage" TO gateway_ingest_reader;
