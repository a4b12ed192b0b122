CREATE TABLE `applied_dedupe_keys` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`dedupe_key` text NOT NULL,
	`offset` integer NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `dedupe_key`)
);
--> statement-breakpoint
CREATE INDEX `applied_dedupe_keys_received` ON `applied_dedupe_keys` (`received_at`);