CREATE TABLE `change_outbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`source_record_id` text NOT NULL,
	`source_offset` integer NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `pass_seen` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`pass_id` text NOT NULL,
	`entity_id` text NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `pass_id`, `entity_id`)
);
