/**
 * The drizzle schema of a read-model file. drizzle-kit reads this module to generate
 * `drizzle/`; the migrations run when a file is opened. Each projected table is defined in its
 * entity's module (src/projections/) and exported here; the bookkeeping tables live here.
 *
 * Every table is keyed by `app_id` + `business_id` first (application-level facts such as
 * webhooksEnabled use `business_id = ''`), so no row is reachable without its tenant.
 *
 * Bookkeeping columns (`last_*`) say which observation a row holds: the domain event id, the
 * log offset and the index of the event inside its record (a sync page holds many). They drive
 * the conflict rule and make redeliveries idempotent (see internal/projector.ts).
 */
import { consumerCheckpoints } from "@ocs/event-log/Tables"
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import { tenantColumns as tenant } from "./projections/Projection.ts"

/** The projection's checkpoint lives in the same file, committed with the rows. */
export { consumerCheckpoints }

export { table as bills, itemsTable as billItems } from "./projections/bills.ts"
export { table as brands } from "./projections/brands.ts"
export { table as categories } from "./projections/categories.ts"
export { table as commands } from "./projections/commands.ts"
export { table as customers } from "./projections/customers.ts"
export { table as depots } from "./projections/depots.ts"
export { table as documents } from "./projections/documents.ts"
export { table as inventory } from "./projections/inventory.ts"
export { itemsTable as orderItems, table as orders } from "./projections/orders.ts"
export { table as payments } from "./projections/payments.ts"
export { table as products } from "./projections/products.ts"
export {
  conversationsTable as vpageConversations,
  customersTable as vpageCustomers,
  messagesTable as vpageMessages,
  pagesTable as vpagePages,
  tagsTable as vpageTags,
  usersTable as vpageUsers
} from "./projections/pageService.ts"
export { table as unknownEvents } from "./projections/unknownEvents.ts"
export { table as webhooksEnabled } from "./projections/webhooks.ts"

/**
 * Bookkeeping: the log records already applied (by offset), so that a replay or redelivery
 * applies exactly once whatever the conflict rule would say about an old record. Not tenant
 * data: it mirrors the log, like the checkpoint.
 */
export const appliedRecords = sqliteTable("applied_records", {
  offset: integer("offset").primaryKey()
})

/**
 * Bookkeeping, Kafka mode: the dedupe keys applied, with the position of the record that
 * carried each. Several servers each append what they receive, so a webhook redelivered to
 * another server (or a page that server fetched again) reaches the topic twice under one key;
 * the copy at another position is not applied. Entries older than the dedupe window are
 * pruned. Not tenant data.
 */
export const appliedDedupeKeys = sqliteTable("applied_dedupe_keys", {
  appId: text("app_id").notNull(),
  businessId: text("business_id").notNull(),
  dedupeKey: text("dedupe_key").notNull(),
  offset: integer("offset").notNull(),
  receivedAt: integer("received_at").notNull()
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.dedupeKey] }), index("applied_dedupe_keys_received").on(t.receivedAt)])

/**
 * Bookkeeping: records of businesses the projection was told not to accept yet (not registered
 * when they were read). The checkpoint moves past them; `release` projects them from the log by
 * offset once the business is accepted, then deletes them here. Not tenant data.
 */
export const quarantinedRecords = sqliteTable("quarantined_records", {
  offset: integer("offset").primaryKey(),
  ...tenant,
  type: text("type").notNull(),
  receivedAt: integer("received_at").notNull()
}, (t) => [index("quarantined_records_tenant").on(t.appId, t.businessId, t.offset)])

/**
 * Changes found by the projection (a pull's record compared with the copy, a completed pass's
 * missing entities), written in the transaction of the record that revealed them and relayed
 * to the log as `changes` records (docs/architecture.md §4.14); a row leaves once its record is
 * durable in the log.
 */
export const changeOutbox = sqliteTable("change_outbox", {
  seq: integer("seq").primaryKey({ autoIncrement: true }),
  ...tenant,
  /** The log record that revealed the changes (the relayed record's dedupe key names it). */
  sourceRecordId: text("source_record_id").notNull(),
  sourceOffset: integer("source_offset").notNull(),
  /** The `changes` record's body: `{"changes":[...]}`. */
  body: text("body").notNull(),
  /**
   * The revealing record's `traceparent`, if it had one: the relayed record carries it, so a
   * plugin's handling links to the append that told us (docs/architecture.md §4.17).
   */
  trace: text("trace")
})

/** The ids each running full pass has seen, on disk (a pass may cover 100,000s of entities). */
export const passSeen = sqliteTable("pass_seen", {
  ...tenant,
  passId: text("pass_id").notNull(),
  entityId: text("entity_id").notNull()
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.passId, t.entityId] })])
