/**
 * The drizzle schema of a read-model file. drizzle-kit reads this module to generate
 * `drizzle/`; the migrations run when a file is opened.
 *
 * Every table is keyed by `app_id` + `business_id` first (application-level facts such as
 * webhooksEnabled use `business_id = ''`), so no row is reachable without its tenant.
 *
 * Bookkeeping columns (`last_*`) say which observation a row holds: the domain event id, the
 * log offset and the index of the event inside its record (a sync page holds many). They drive
 * the conflict rule and make redeliveries idempotent (see internal/projector.ts).
 */
import { consumerCheckpoints } from "@ocs/event-log/Tables"
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"

/** The projection's checkpoint lives in the same file, committed with the rows. */
export { consumerCheckpoints }

const tenant = {
  appId: text("app_id").notNull(),
  businessId: text("business_id").notNull()
}

/** Which observation the row holds (excluded from digests except where noted). */
const bookkeeping = {
  lastEventId: text("last_event_id").notNull(),
  lastOffset: integer("last_offset").notNull(),
  lastIndex: integer("last_index").notNull(),
  lastSource: text("last_source").notNull(),
  lastReceivedAt: integer("last_received_at").notNull()
}

/** `updated_at`: the value as received (strings as-is, other JSON as text); `_ms`: parsed. */
const version = {
  updatedAt: text("updated_at"),
  updatedAtMs: integer("updated_at_ms")
}

export const products = sqliteTable("products", {
  ...tenant,
  id: text("id").notNull(),
  appProductId: text("app_product_id"),
  code: text("code"),
  barcode: text("barcode"),
  name: text("name"),
  price: real("price"),
  /** The price as a JSON literal (bigints digit for digit). */
  priceText: text("price_text"),
  /** The whole record, lossless JSON (`Json.stringify`); unknown fields kept. */
  record: text("record").notNull(),
  ...version,
  /** 1: tombstone (productDelete); content columns are null, `record` holds the delete data. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("products_tenant_name").on(t.appId, t.businessId, t.name),
  index("products_tenant_app_product_id").on(t.appId, t.businessId, t.appProductId)
])

export const inventory = sqliteTable("inventory", {
  ...tenant,
  productId: text("product_id").notNull(),
  /** '' when the stock level names no depot. */
  depotId: text("depot_id").notNull(),
  quantity: real("quantity"),
  quantityText: text("quantity_text"),
  available: real("available"),
  availableText: text("available_text"),
  record: text("record").notNull(),
  ...version,
  ...bookkeeping
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.productId, t.depotId] })])

export const orders = sqliteTable("orders", {
  ...tenant,
  id: text("id").notNull(),
  /** appOrderId, or its deprecated alias orderPrivateId (spec: Order). */
  appOrderId: text("app_order_id"),
  customerName: text("customer_name"),
  customerMobile: text("customer_mobile"),
  /** As received: a string as-is, any other JSON value as its text. */
  status: text("status"),
  /** The order lines (`products`), lossless JSON array. */
  lines: text("lines"),
  lineCount: integer("line_count").notNull().default(0),
  record: text("record").notNull(),
  ...version,
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("orders_tenant_app_order_id").on(t.appId, t.businessId, t.appOrderId),
  index("orders_tenant_mobile").on(t.appId, t.businessId, t.customerMobile)
])

export const payments = sqliteTable("payments", {
  ...tenant,
  /** The payment id; `event:<domain event id>` when the record carries none. */
  id: text("id").notNull(),
  orderId: text("order_id"),
  invoiceId: text("invoice_id"),
  amount: real("amount"),
  amountText: text("amount_text"),
  method: text("method"),
  record: text("record").notNull(),
  ...version,
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("payments_tenant_order").on(t.appId, t.businessId, t.orderId)
])

/** Resources without a typed model (invoices, warranty slips, ...), from sync pages. */
export const documents = sqliteTable("documents", {
  ...tenant,
  kind: text("kind").notNull(),
  /** The id under the operation's idField; `event:<domain event id>` when absent. */
  id: text("id").notNull(),
  body: text("body").notNull(),
  ...version,
  ...bookkeeping
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.kind, t.id] })])

/** The last webhooksEnabled per application (`business_id = ''`). */
export const webhooksEnabled = sqliteTable("webhooks_enabled", {
  ...tenant,
  /** JSON object: id -> event name, as received. */
  registeredEvents: text("registered_events").notNull(),
  ...bookkeeping
}, (t) => [primaryKey({ columns: [t.appId, t.businessId] })])

/** Events the decoder (or the projector) could not give meaning to: kept for audit. */
export const unknownEvents = sqliteTable("unknown_events", {
  ...tenant,
  eventId: text("event_id").notNull(),
  recordId: text("record_id").notNull(),
  offset: integer("offset").notNull(),
  source: text("source").notNull(),
  type: text("type").notNull(),
  reason: text("reason").notNull(),
  /** Lossless JSON of what could not be used (null when there was nothing). */
  data: text("data"),
  receivedAt: integer("received_at").notNull()
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.eventId] })])

/**
 * Bookkeeping: the log records already applied (by offset), so that a replay or redelivery
 * applies exactly once whatever the conflict rule would say about an old record. Not tenant
 * data: it mirrors the log, like the checkpoint.
 */
export const appliedRecords = sqliteTable("applied_records", {
  offset: integer("offset").primaryKey()
})

/** Per tenant and resource: where the sync server is. Written by the sync server, not projected. */
export const syncState = sqliteTable("sync_state", {
  ...tenant,
  resource: text("resource").notNull(),
  /** The paginator cursor exactly as received (opaque text). */
  cursor: text("cursor"),
  lastFullSyncAt: integer("last_full_sync_at"),
  /** Upper bound (updatedAtTo) of the last incremental sync, as sent. */
  lastIncrementalBound: text("last_incremental_bound"),
  /** e.g. idle | running | attention. */
  status: text("status").notNull(),
  /** Why a person should look (when status is attention). */
  attentionReason: text("attention_reason"),
  updatedAt: integer("updated_at").notNull()
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.resource] })])
