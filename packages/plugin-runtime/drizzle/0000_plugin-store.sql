-- Edited by hand: IF NOT EXISTS, because files written before the store had migrations already
-- hold these tables (same DDL, run inline at open then). Those files declared the dead letters'
-- (plugin, event_id) uniqueness inside CREATE TABLE; they get this unique index as well, which
-- enforces the same rule (their rows already obey it).
CREATE TABLE IF NOT EXISTS `plugin_checkpoints` (
	`plugin` text PRIMARY KEY NOT NULL,
	`checkpoint` text NOT NULL,
	`last_offset` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `plugin_dead_letters` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`plugin` text NOT NULL,
	`event_id` text NOT NULL,
	`event_tag` text NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text,
	`record_offset` integer NOT NULL,
	`record` text NOT NULL,
	`error` text NOT NULL,
	`attempts` integer NOT NULL,
	`first_failed_at` integer NOT NULL,
	`last_failed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS `plugin_dead_letters_plugin_event_id_unique` ON `plugin_dead_letters` (`plugin`,`event_id`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `plugin_kv` (
	`plugin` text NOT NULL,
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`plugin`, `app_id`, `business_id`, `key`)
);
