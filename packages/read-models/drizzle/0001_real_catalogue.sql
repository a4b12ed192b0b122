CREATE TABLE `bill_items` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`bill_id` text NOT NULL,
	`line` integer NOT NULL,
	`product_id` text,
	`code` text,
	`name` text,
	`quantity` real,
	`price` real,
	`discount` real,
	`record` text NOT NULL,
	`amount` real,
	PRIMARY KEY(`app_id`, `business_id`, `bill_id`, `line`)
);
--> statement-breakpoint
CREATE TABLE `bills` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`order_id` text,
	`depot_id` text,
	`date` text,
	`type` text,
	`mode` text,
	`customer_id` text,
	`customer_name` text,
	`customer_mobile` text,
	`amount` real,
	`amount_text` text,
	`created_at` text,
	`created_at_ms` integer,
	`record` text NOT NULL,
	`deleted` integer DEFAULT 0 NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `bills_tenant_date` ON `bills` (`app_id`,`business_id`,`date`);--> statement-breakpoint
CREATE INDEX `bills_tenant_customer` ON `bills` (`app_id`,`business_id`,`customer_id`);--> statement-breakpoint
CREATE TABLE `brands` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`parent_id` text,
	`code` text,
	`name` text,
	`status` text,
	`record` text NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE TABLE `categories` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`parent_id` text,
	`code` text,
	`name` text,
	`status` text,
	`record` text NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE TABLE `customers` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`type` text,
	`code` text,
	`name` text,
	`mobile` text,
	`email` text,
	`points` real,
	`total_amount` real,
	`total_amount_text` text,
	`level` text,
	`group` text,
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
CREATE INDEX `customers_tenant_mobile` ON `customers` (`app_id`,`business_id`,`mobile`);--> statement-breakpoint
CREATE TABLE `depots` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`id` text NOT NULL,
	`code` text,
	`name` text,
	`mobile` text,
	`address` text,
	`record` text NOT NULL,
	`last_event_id` text NOT NULL,
	`last_offset` integer NOT NULL,
	`last_index` integer NOT NULL,
	`last_source` text NOT NULL,
	`last_received_at` integer NOT NULL,
	PRIMARY KEY(`app_id`, `business_id`, `id`)
);
--> statement-breakpoint
CREATE TABLE `order_items` (
	`app_id` text NOT NULL,
	`business_id` text NOT NULL,
	`order_id` text NOT NULL,
	`line` integer NOT NULL,
	`product_id` text,
	`code` text,
	`name` text,
	`quantity` real,
	`price` real,
	`discount` real,
	`record` text NOT NULL,
	`total` real,
	PRIMARY KEY(`app_id`, `business_id`, `order_id`, `line`)
);
--> statement-breakpoint
CREATE INDEX `order_items_tenant_product` ON `order_items` (`app_id`,`business_id`,`product_id`);--> statement-breakpoint
DROP TABLE `inventory`;--> statement-breakpoint
DROP TABLE `orders`;--> statement-breakpoint
ALTER TABLE `products` ADD `category_id` text;--> statement-breakpoint
ALTER TABLE `products` ADD `brand_id` text;