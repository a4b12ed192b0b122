DROP INDEX `records_tenant_type_received`;--> statement-breakpoint
DROP INDEX `records_tenant_received`;--> statement-breakpoint
DROP INDEX `records_tenant_entity`;--> statement-breakpoint
CREATE INDEX `records_received_tenant` ON `records` (`received_at`,`tenant`);