ALTER TABLE "ingest_partitions" ADD COLUMN "claimed_by" text;--> statement-breakpoint
ALTER TABLE "ingest_partitions" ADD COLUMN "claimed_until" timestamp with time zone;