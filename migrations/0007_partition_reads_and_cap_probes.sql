ALTER TABLE "gateway_knowledge" ADD COLUMN "cap_region_lo" bigint;--> statement-breakpoint
ALTER TABLE "gateway_knowledge" ADD COLUMN "cap_region_hi" bigint;--> statement-breakpoint
ALTER TABLE "gateway_knowledge" ADD COLUMN "measured_cap" integer;--> statement-breakpoint
ALTER TABLE "gateway_knowledge" ADD COLUMN "probing_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "ingest_partitions" ADD COLUMN "skip_proven" boolean DEFAULT false NOT NULL;