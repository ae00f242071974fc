CREATE TABLE "countries" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "country_code_aliases" (
	"requested_code" text PRIMARY KEY NOT NULL,
	"country_id" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "earthquake_events" (
	"id" text PRIMARY KEY NOT NULL,
	"time" timestamp with time zone NOT NULL,
	"magnitude" double precision,
	"magnitude_type" text,
	"place" text,
	"latitude" double precision NOT NULL,
	"longitude" double precision NOT NULL,
	"depth_km" double precision,
	"tsunami_flag" boolean NOT NULL,
	"url" text,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"revised_at" timestamp with time zone,
	"last_execution_id" bigint
);
--> statement-breakpoint
CREATE TABLE "gateway_executions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"operation" text NOT NULL,
	"stream_key" text,
	"partition_key" text,
	"job_id" text,
	"attempt" integer,
	"call_purpose" text,
	"request" jsonb NOT NULL,
	"http_status" integer,
	"code" integer,
	"message" text,
	"outcome" text,
	"billed" boolean DEFAULT false NOT NULL,
	"units" double precision,
	"execution_id" text,
	"invocation_id" text,
	"error_kind" text,
	"error_detail" text,
	"truncated" boolean,
	"rows_written" integer,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL,
	"duration_ms" integer,
	CONSTRAINT "gateway_executions_operation_check" CHECK ("gateway_executions"."operation" in ('earthquake', 'indicator'))
);
--> statement-breakpoint
CREATE TABLE "indicator_series" (
	"indicator_id" text NOT NULL,
	"country_id" text NOT NULL,
	"last_updated" text,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"last_execution_id" bigint,
	CONSTRAINT "indicator_series_indicator_id_country_id_pk" PRIMARY KEY("indicator_id","country_id")
);
--> statement-breakpoint
CREATE TABLE "indicator_values" (
	"indicator_id" text NOT NULL,
	"country_id" text NOT NULL,
	"year" integer NOT NULL,
	"value" double precision,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"changed_at" timestamp with time zone NOT NULL,
	"last_execution_id" bigint,
	CONSTRAINT "indicator_values_indicator_id_country_id_year_pk" PRIMARY KEY("indicator_id","country_id","year")
);
--> statement-breakpoint
CREATE TABLE "indicators" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ingest_partitions" (
	"stream_key" text NOT NULL,
	"partition_key" text NOT NULL,
	"operation" text NOT NULL,
	"window_start" timestamp with time zone,
	"window_end" timestamp with time zone,
	"start_year" integer,
	"end_year" integer,
	"state" text DEFAULT 'pending' NOT NULL,
	"frontier" jsonb,
	"job_id" text,
	"calls" integer DEFAULT 0 NOT NULL,
	"billed_calls" integer DEFAULT 0 NOT NULL,
	"units" double precision DEFAULT 0 NOT NULL,
	"rows_written" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"last_error_kind" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "ingest_partitions_stream_key_partition_key_pk" PRIMARY KEY("stream_key","partition_key"),
	CONSTRAINT "ingest_partitions_state_check" CHECK ("ingest_partitions"."state" in ('pending', 'running', 'done', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "ingest_streams" (
	"stream_key" text PRIMARY KEY NOT NULL,
	"operation" text NOT NULL,
	"name" text,
	"params" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "country_code_aliases" ADD CONSTRAINT "country_code_aliases_country_id_countries_id_fk" FOREIGN KEY ("country_id") REFERENCES "public"."countries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "earthquake_events" ADD CONSTRAINT "earthquake_events_last_execution_id_gateway_executions_id_fk" FOREIGN KEY ("last_execution_id") REFERENCES "public"."gateway_executions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "indicator_series" ADD CONSTRAINT "indicator_series_indicator_id_indicators_id_fk" FOREIGN KEY ("indicator_id") REFERENCES "public"."indicators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "indicator_series" ADD CONSTRAINT "indicator_series_country_id_countries_id_fk" FOREIGN KEY ("country_id") REFERENCES "public"."countries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "indicator_series" ADD CONSTRAINT "indicator_series_last_execution_id_gateway_executions_id_fk" FOREIGN KEY ("last_execution_id") REFERENCES "public"."gateway_executions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "indicator_values" ADD CONSTRAINT "indicator_values_last_execution_id_gateway_executions_id_fk" FOREIGN KEY ("last_execution_id") REFERENCES "public"."gateway_executions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_partitions" ADD CONSTRAINT "ingest_partitions_stream_key_ingest_streams_stream_key_fk" FOREIGN KEY ("stream_key") REFERENCES "public"."ingest_streams"("stream_key") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "earthquake_events_time_idx" ON "earthquake_events" USING btree ("time");--> statement-breakpoint
CREATE INDEX "gateway_executions_started_at_idx" ON "gateway_executions" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "gateway_executions_stream_idx" ON "gateway_executions" USING btree ("stream_key","started_at");--> statement-breakpoint
CREATE INDEX "gateway_executions_job_idx" ON "gateway_executions" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "indicator_values_country_idx" ON "indicator_values" USING btree ("country_id","year");--> statement-breakpoint
CREATE INDEX "ingest_partitions_state_idx" ON "ingest_partitions" USING btree ("state");