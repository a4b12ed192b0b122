CREATE TABLE `commands` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`kind` text NOT NULL,
	`state` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`requested_by` text NOT NULL,
	`payload` text NOT NULL,
	`fingerprint` text NOT NULL,
	`marker` text,
	`attempts` integer NOT NULL,
	`entity_id` text,
	`last_answer` text,
	`reason` text,
	`evidence` text,
	`requested_at_ms` integer NOT NULL,
	`updated_at_ms` integer NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `commands_tenant_key` ON `commands` (`app_id`,`business_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `commands_tenant_state` ON `commands` (`app_id`,`business_id`,`state`);