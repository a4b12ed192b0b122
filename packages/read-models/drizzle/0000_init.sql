CREATE TABLE `applied_records` (
	`offset` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `consumer_checkpoints` (
	`consumer` text PRIMARY KEY NOT NULL,
	`checkpoint` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `documents` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`kind` text NOT NULL,
	`id` text NOT NULL,
	`body` text NOT NULL,
	`updated_at` text,
	`updated_at_ms` integer,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `kind`, `id`)
);
--> statement-breakpoint
CREATE TABLE `inventory` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`product_id` text NOT NULL,
	`depot_id` text NOT NULL,
	`quantity` real,
	`quantity_text` text,
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
CREATE TABLE `orders` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`app_order_id` text,
	`customer_name` text,
	`customer_mobile` text,
	`status` text,
	`lines` text,
	`line_count` integer DEFAULT 0 NOT NULL,
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
CREATE TABLE `payments` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`order_id` text,
	`invoice_id` text,
	`amount` real,
	`amount_text` text,
	`method` text,
	`record` text NOT NULL,
	`updated_at` text,
	`updated_at_ms` integer,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `payments_tenant_order` ON `payments` (`app_id`,`business_id`,`order_id`);--> statement-breakpoint
CREATE TABLE `products` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`app_product_id` text,
	`code` text,
	`barcode` text,
	`name` text,
	`price` real,
	`price_text` text,
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
CREATE INDEX `products_tenant_name` ON `products` (`app_id`,`business_id`,`name`);--> statement-breakpoint
CREATE INDEX `products_tenant_app_product_id` ON `products` (`app_id`,`business_id`,`app_product_id`);--> statement-breakpoint
CREATE TABLE `sync_state` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`resource` text NOT NULL,
	`cursor` text,
	`last_full_sync_at` integer,
	`last_incremental_bound` text,
	`status` text NOT NULL,
	`attention_reason` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `resource`)
);
--> statement-breakpoint
CREATE TABLE `unknown_events` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`event_id` text NOT NULL,
	`record_id` text NOT NULL,
	`offset` integer NOT NULL,
	`source` text NOT NULL,
	`type` text NOT NULL,
	`reason` text NOT NULL,
	`data` text,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `event_id`)
);
--> statement-breakpoint
CREATE TABLE `webhooks_enabled` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`registered_events` text NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`)
);
