CREATE TABLE "gateway_knowledge" (
	"gateway_key" text PRIMARY KEY NOT NULL,
	"cap_floor" integer NOT NULL,
	"cap_seen_at" timestamp with time zone NOT NULL,
	"probed_at" timestamp with time zone,
	"order_stats" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ingest_partitions" DROP CONSTRAINT "ingest_partitions_state_check";--> statement-breakpoint
ALTER TABLE "ingest_partitions" ADD CONSTRAINT "ingest_partitions_state_check" CHECK ("ingest_partitions"."state" in ('pending', 'running', 'done', 'partial', 'failed'));