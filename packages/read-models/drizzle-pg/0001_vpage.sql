CREATE TABLE "vpage_conversations" (
	"app_id" text NOT NULL,
	"business_id" text NOT NULL,
	"id" text NOT NULL,
	"page_id" text,
	"type" text,
	"status" text,
	"page_user_id" text,
	"page_user_name" text,
	"has_phone" bigint,
	"has_reply" bigint,
	"last_message" text,
	"created_at_ms" bigint,
	"record" text NOT NULL,
	"record_json" jsonb GENERATED ALWAYS AS (CASE WHEN strpos("record", '\u0000') > 0 THEN NULL ELSE "record"::jsonb END) STORED,
	"updated_at" text,
	"updated_at_ms" bigint,
	"last_event_id" text NOT NULL,
	"last_offset" bigint NOT NULL,
	"last_index" bigint NOT NULL,
	"last_source" text NOT NULL,
	"last_received_at" bigint NOT NULL,
	CONSTRAINT "vpage_conversations_app_id_business_id_id_pk" PRIMARY KEY("app_id","business_id","id")
);
--> statement-breakpoint
CREATE TABLE "vpage_customers" (
	"app_id" text NOT NULL,
	"business_id" text NOT NULL,
	"id" text NOT NULL,
	"page_id" text,
	"page_user_id" text,
	"name" text,
	"phones" text,
	"emails" text,
	"created_at_ms" bigint,
	"record" text NOT NULL,
	"record_json" jsonb GENERATED ALWAYS AS (CASE WHEN strpos("record", '\u0000') > 0 THEN NULL ELSE "record"::jsonb END) STORED,
	"last_event_id" text NOT NULL,
	"last_offset" bigint NOT NULL,
	"last_index" bigint NOT NULL,
	"last_source" text NOT NULL,
	"last_received_at" bigint NOT NULL,
	CONSTRAINT "vpage_customers_app_id_business_id_id_pk" PRIMARY KEY("app_id","business_id","id")
);
--> statement-breakpoint
CREATE TABLE "vpage_messages" (
	"app_id" text NOT NULL,
	"business_id" text NOT NULL,
	"id" text NOT NULL,
	"conversation_id" text,
	"page_id" text,
	"sender_id" text,
	"sender_name" text,
	"created_by_id" text,
	"message" text,
	"created_at_ms" bigint,
	"record" text NOT NULL,
	"record_json" jsonb GENERATED ALWAYS AS (CASE WHEN strpos("record", '\u0000') > 0 THEN NULL ELSE "record"::jsonb END) STORED,
	"last_event_id" text NOT NULL,
	"last_offset" bigint NOT NULL,
	"last_index" bigint NOT NULL,
	"last_source" text NOT NULL,
	"last_received_at" bigint NOT NULL,
	CONSTRAINT "vpage_messages_app_id_business_id_id_pk" PRIMARY KEY("app_id","business_id","id")
);
--> statement-breakpoint
CREATE TABLE "vpage_pages" (
	"app_id" text NOT NULL,
	"business_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text,
	"channel" text,
	"created_at_ms" bigint,
	"expired_at_ms" bigint,
	"record" text NOT NULL,
	"record_json" jsonb GENERATED ALWAYS AS (CASE WHEN strpos("record", '\u0000') > 0 THEN NULL ELSE "record"::jsonb END) STORED,
	"last_event_id" text NOT NULL,
	"last_offset" bigint NOT NULL,
	"last_index" bigint NOT NULL,
	"last_source" text NOT NULL,
	"last_received_at" bigint NOT NULL,
	CONSTRAINT "vpage_pages_app_id_business_id_id_pk" PRIMARY KEY("app_id","business_id","id")
);
--> statement-breakpoint
CREATE TABLE "vpage_tags" (
	"app_id" text NOT NULL,
	"business_id" text NOT NULL,
	"id" text NOT NULL,
	"name" text,
	"status" text,
	"color" text,
	"background_color" text,
	"position" bigint,
	"created_at_ms" bigint,
	"record" text NOT NULL,
	"record_json" jsonb GENERATED ALWAYS AS (CASE WHEN strpos("record", '\u0000') > 0 THEN NULL ELSE "record"::jsonb END) STORED,
	"last_event_id" text NOT NULL,
	"last_offset" bigint NOT NULL,
	"last_index" bigint NOT NULL,
	"last_source" text NOT NULL,
	"last_received_at" bigint NOT NULL,
	CONSTRAINT "vpage_tags_app_id_business_id_id_pk" PRIMARY KEY("app_id","business_id","id")
);
--> statement-breakpoint
CREATE TABLE "vpage_users" (
	"app_id" text NOT NULL,
	"business_id" text NOT NULL,
	"id" text NOT NULL,
	"display_name" text,
	"pos_uid" text,
	"pos_name" text,
	"created_at_ms" bigint,
	"record" text NOT NULL,
	"record_json" jsonb GENERATED ALWAYS AS (CASE WHEN strpos("record", '\u0000') > 0 THEN NULL ELSE "record"::jsonb END) STORED,
	"last_event_id" text NOT NULL,
	"last_offset" bigint NOT NULL,
	"last_index" bigint NOT NULL,
	"last_source" text NOT NULL,
	"last_received_at" bigint NOT NULL,
	CONSTRAINT "vpage_users_app_id_business_id_id_pk" PRIMARY KEY("app_id","business_id","id")
);
--> statement-breakpoint
CREATE INDEX "vpage_conversations_tenant_page" ON "vpage_conversations" USING btree ("app_id","business_id","page_id","updated_at_ms");--> statement-breakpoint
CREATE INDEX "vpage_customers_tenant_page" ON "vpage_customers" USING btree ("app_id","business_id","page_id");--> statement-breakpoint
CREATE INDEX "vpage_messages_tenant_conversation" ON "vpage_messages" USING btree ("app_id","business_id","conversation_id","created_at_ms");