ALTER TABLE "gateway_knowledge" ADD COLUMN "recount_stored" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "gateway_knowledge" ADD COLUMN "recount_added" double precision DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "gateway_knowledge" ADD COLUMN "recounted_at" timestamp with time zone;