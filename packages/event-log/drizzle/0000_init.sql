CREATE TABLE `commits` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`committed_at` integer NOT NULL,
	`requests` integer NOT NULL,
	`appended` integer NOT NULL,
	`duplicates` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `consumer_checkpoints` (
	`consumer` text PRIMARY KEY NOT NULL,
	`checkpoint` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `dedupe_decisions` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`decided_at` integer NOT NULL,
	`tenant` text NOT NULL,
	`reason` text NOT NULL,
	`dedupe_key` text,
	`original_offset` integer NOT NULL,
	`id` text NOT NULL,
	`type` text NOT NULL,
	`source` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dedupe_decisions_tenant_key` ON `dedupe_decisions` (`tenant`,`dedupe_key`);--> statement-breakpoint
CREATE TABLE `records` (
	`offset` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`tenant` text NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text,
	`source` text NOT NULL,
	`type` text NOT NULL,
	`received_at` integer NOT NULL,
	`body` text NOT NULL,
	`dedupe_key` text,
	`meta` text NOT NULL,
	`entity_id` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `records_id` ON `records` (`id`);--> statement-breakpoint
CREATE INDEX `records_tenant_offset` ON `records` (`tenant`,`offset`);--> statement-breakpoint
CREATE INDEX `records_tenant_type_received` ON `records` (`tenant`,`type`,`received_at`);--> statement-breakpoint
CREATE INDEX `records_tenant_received` ON `records` (`tenant`,`received_at`);--> statement-breakpoint
CREATE INDEX `records_tenant_entity` ON `records` (`tenant`,`entity_id`) WHERE "records"."entity_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `records_tenant_dedupe` ON `records` (`tenant`,`dedupe_key`,`received_at`) WHERE "records"."dedupe_key" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `relay_state` (
	`name` text PRIMARY KEY NOT NULL,
	`relayed_offset` integer NOT NULL,
	`updated_at` integer NOT NULL
);
