CREATE TABLE `relay_dead_letters` (
	`offset` integer PRIMARY KEY NOT NULL,
	`topic` text NOT NULL,
	`tenant` text NOT NULL,
	`record_id` text NOT NULL,
	`type` text NOT NULL,
	`bytes` integer NOT NULL,
	`limit_bytes` integer NOT NULL,
	`reason` text NOT NULL,
	`refused_at` integer NOT NULL,
	`redriven_at` integer
);
--> statement-breakpoint
CREATE INDEX `relay_dead_letters_waiting` ON `relay_dead_letters` (`topic`,`redriven_at`);