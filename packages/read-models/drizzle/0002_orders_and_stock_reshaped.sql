CREATE TABLE `inventory` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`product_id` text NOT NULL,
	`depot_id` text NOT NULL,
	`remain` real,
	`remain_text` text,
	`available` real,
	`available_text` text,
	`record` text NOT NULL,
	`updated_at` text,
	`updated_at_ms` integer,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `product_id`, `depot_id`)
);
--> statement-breakpoint
CREATE INDEX `inventory_tenant_depot` ON `inventory` (`app_id`,`business_id`,`depot_id`);--> statement-breakpoint
CREATE TABLE `orders` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`app_order_id` text,
	`type` text,
	`status` text,
	`sale_channel` text,
	`depot_id` text,
	`customer_id` text,
	`customer_name` text,
	`customer_mobile` text,
	`total` real,
	`total_text` text,
	`line_count` integer DEFAULT 0 NOT NULL,
	`created_at` text,
	`created_at_ms` integer,
	`record` text NOT NULL,
	`updated_at` text,
	`updated_at_ms` integer,
	`deleted` integer DEFAULT 0 NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `orders_tenant_app_order_id` ON `orders` (`app_id`,`business_id`,`app_order_id`);--> statement-breakpoint
CREATE INDEX `orders_tenant_mobile` ON `orders` (`app_id`,`business_id`,`customer_mobile`);--> statement-breakpoint
CREATE INDEX `orders_tenant_status` ON `orders` (`app_id`,`business_id`,`status`);--> statement-breakpoint
CREATE INDEX `orders_tenant_created` ON `orders` (`app_id`,`business_id`,`created_at_ms`);