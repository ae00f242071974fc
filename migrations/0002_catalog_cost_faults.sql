CREATE TABLE "backfills" (
	"id" text PRIMARY KEY NOT NULL,
	"operation" text NOT NULL,
	"description" text NOT NULL,
	"stream_keys" jsonb NOT NULL,
	"control" text DEFAULT 'active' NOT NULL,
	"max_billed_calls" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "budget_counters" (
	"scope" text NOT NULL,
	"day" date NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "budget_counters_scope_day_pk" PRIMARY KEY("scope","day")
);
--> statement-breakpoint
CREATE TABLE "earthquake_revisions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"field" text NOT NULL,
	"old_value" jsonb,
	"new_value" jsonb,
	"execution_id" bigint,
	"revised_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway_cost_rollup" (
	"day" date NOT NULL,
	"operation" text NOT NULL,
	"stream_key" text NOT NULL,
	"calls" integer NOT NULL,
	"billed_calls" integer NOT NULL,
	"billed_unknown" integer NOT NULL,
	"units" double precision NOT NULL,
	"failures_by_kind" jsonb NOT NULL,
	CONSTRAINT "gateway_cost_rollup_day_operation_stream_key_pk" PRIMARY KEY("day","operation","stream_key")
);
--> statement-breakpoint
CREATE TABLE "indicator_value_revisions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"indicator_id" text NOT NULL,
	"country_id" text NOT NULL,
	"year" integer NOT NULL,
	"old_value" double precision,
	"new_value" double precision,
	"last_updated" text,
	"execution_id" bigint,
	"changed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "earthquake_events" DROP CONSTRAINT "earthquake_events_last_execution_id_gateway_executions_id_fk";
--> statement-breakpoint
ALTER TABLE "indicator_series" DROP CONSTRAINT "indicator_series_last_execution_id_gateway_executions_id_fk";
--> statement-breakpoint
ALTER TABLE "indicator_values" DROP CONSTRAINT "indicator_values_last_execution_id_gateway_executions_id_fk";
--> statement-breakpoint
ALTER TABLE "gateway_executions" ALTER COLUMN "billed" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "gateway_executions" ALTER COLUMN "billed" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "gateway_executions" ALTER COLUMN "finished_at" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "earthquake_events" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "earthquake_events" ADD COLUMN "deleted_execution_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway_executions" ADD COLUMN "backfill_id" text;--> statement-breakpoint
ALTER TABLE "ingest_partitions" ADD COLUMN "consecutive_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "ingest_partitions" ADD COLUMN "backfill_id" text;--> statement-breakpoint
CREATE INDEX "earthquake_revisions_event_idx" ON "earthquake_revisions" USING btree ("event_id","revised_at");--> statement-breakpoint
CREATE INDEX "earthquake_revisions_at_idx" ON "earthquake_revisions" USING btree ("revised_at");--> statement-breakpoint
CREATE INDEX "indicator_value_revisions_series_idx" ON "indicator_value_revisions" USING btree ("indicator_id","country_id","year");