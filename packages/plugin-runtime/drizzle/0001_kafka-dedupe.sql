CREATE TABLE `plugin_applied_dedupe_keys` (
	`plugin` text NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`dedupe_key` text NOT NULL,
	`offset` integer NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`plugin`, `app_id`, `business_id`, `dedupe_key`)
);
--> statement-breakpoint
CREATE INDEX `plugin_applied_dedupe_keys_received` ON `plugin_applied_dedupe_keys` (`received_at`);