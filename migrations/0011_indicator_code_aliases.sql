CREATE TABLE "indicator_code_aliases" (
	"requested_code" text PRIMARY KEY NOT NULL,
	"indicator_id" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "indicator_code_aliases" ADD CONSTRAINT "indicator_code_aliases_indicator_id_indicators_id_fk" FOREIGN KEY ("indicator_id") REFERENCES "public"."indicators"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- A data table like country_code_aliases: BI reads it to join a stream's code to its values.
GRANT SELECT ON "indicator_code_aliases" TO gateway_ingest_reader;
