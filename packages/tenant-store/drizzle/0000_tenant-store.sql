-- Edited by hand: IF NOT EXISTS, because files written before the store had migrations already
-- hold these tables (same DDL, run inline at open then) and their rows must stay.
CREATE TABLE IF NOT EXISTS `apps` (
	`app_id` text PRIMARY KEY NOT NULL,
	`verify_tokens` text NOT NULL,
	`enabled` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `businesses` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`access_token` text NOT NULL,
	`version` text DEFAULT '3.0' NOT NULL,
	`permissions` text DEFAULT '[]' NOT NULL,
	`depots` text DEFAULT '[]' NOT NULL,
	`granted_at` integer,
	`expires_at` integer,
	`status` text DEFAULT 'active' NOT NULL,
	`attention_code` text,
	`attention_message` text,
	`attention_at` integer,
	`last_webhook_at` integer,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`),
	FOREIGN KEY (`app_id`) REFERENCES `apps`(`app_id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `notices` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`kind` text NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `kind`)
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `recent_errors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text,
	`resource` text,
	`tag` text NOT NULL,
	`message` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `resource_state` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`resource` text NOT NULL,
	`paused_code` text,
	`paused_message` text,
	`paused_at` integer,
	`cursor` text,
	`full_started_at` integer,
	`full_completed_at` integer,
	`incremental_bound` integer,
	`last_run_at` integer,
	`pages` integer DEFAULT 0 NOT NULL,
	`records` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	PRIMARY KEY(`app_id`, `business_id`, `resource`)
);
