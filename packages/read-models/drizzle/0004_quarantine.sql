CREATE TABLE `quarantined_records` (
	`offset` integer PRIMARY KEY NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`type` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `quarantined_records_tenant` ON `quarantined_records` (`app_id`,`business_id`,`offset`);