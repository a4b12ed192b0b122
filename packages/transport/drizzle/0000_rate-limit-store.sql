-- Edited by hand: IF NOT EXISTS, because files written before the store had migrations already
-- hold these tables and this index (same DDL, run inline at open then); WITHOUT ROWID, which
-- drizzle cannot declare, as those files have it (the primary key is the only lookup).
CREATE TABLE IF NOT EXISTS `rate_calls` (
	`session` text NOT NULL,
	`id` integer NOT NULL,
	`key` text NOT NULL,
	`granted_at` integer NOT NULL,
	`completed_at` integer,
	PRIMARY KEY(`session`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `rate_calls_by_key` ON `rate_calls` (`key`,`completed_at`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `rate_keys` (
	`key` text PRIMARY KEY NOT NULL,
	`limit_requests` integer NOT NULL,
	`window_ms` integer NOT NULL,
	`locked_until` integer DEFAULT 0 NOT NULL
) WITHOUT ROWID;
