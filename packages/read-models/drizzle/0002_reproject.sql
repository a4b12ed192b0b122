-- Rows projected before 0001 hold flat orders and stock quantities: their new columns (status
-- codes, channel, depot, totals, order lines, remain) are empty. The log is the source of
-- truth, so the projection starts over: projected rows, the applied-records bookkeeping and the
-- checkpoint are cleared, and the next run re-projects the whole log into the new shape.
-- sync_state is written by the sync server, not projected: it stays.
DELETE FROM `products`;--> statement-breakpoint
DELETE FROM `inventory`;--> statement-breakpoint
DELETE FROM `orders`;--> statement-breakpoint
DELETE FROM `payments`;--> statement-breakpoint
DELETE FROM `documents`;--> statement-breakpoint
DELETE FROM `webhooks_enabled`;--> statement-breakpoint
DELETE FROM `unknown_events`;--> statement-breakpoint
DELETE FROM `applied_records`;--> statement-breakpoint
DELETE FROM `consumer_checkpoints`;
