ALTER TABLE `apps` ADD `secret_key` text;--> statement-breakpoint
ALTER TABLE `apps` ADD `public_url` text;--> statement-breakpoint
ALTER TABLE `businesses` ADD `pages` text DEFAULT '[]' NOT NULL;