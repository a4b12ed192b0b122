-- 0001 and 0002 replace the flat orders and the stock quantities with the nested shape (their
-- old rows are gone: recreated tables rather than dropped columns). The log is the source of
-- truth, so the projection starts over: the other projected rows, the applied-records
-- bookkeeping and the checkpoint are cleared, and the next run re-projects the whole log into
-- the new tables. sync_state is written by the sync server, not projected: it stays.
DELETE FROM `products`;--> statement-breakpoint
DELETE FROM `payments`;--> statement-breakpoint
DELETE FROM `documents`;--> statement-breakpoint
DELETE FROM `webhooks_enabled`;--> statement-breakpoint
DELETE FROM `unknown_events`;--> statement-breakpoint
DELETE FROM `applied_records`;--> statement-breakpoint
DELETE FROM `consumer_checkpoints`;
