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

/** `created_at`: as received; `_ms`: parsed (queries filter on it). */
const created = {
  createdAt: text("created_at"),
  createdAtMs: integer("created_at_ms")
}

export const products = sqliteTable("products", {
  ...tenant,
  id: text("id").notNull(),
  appProductId: text("app_product_id"),
  code: text("code"),
  barcode: text("barcode"),
  name: text("name"),
  /** `prices.retail` (product/list), else a flat `price` (older payloads). */
  price: real("price"),
  /** The price as a JSON literal (bigints digit for digit). */
  priceText: text("price_text"),
  /** `categoryId`, else `category.id` (the product/detail shape webhooks send). */
  categoryId: text("category_id"),
  /** `brandId`, else `brand.id`. */
  brandId: text("brand_id"),
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

/**
 * Stock per product and depot, from inventoryChange (webhook) and product/inventory (pull).
 * `depot_id` is '' for a product's totals (a level that names no depot).
 */
export const inventory = sqliteTable("inventory", {
  ...tenant,
  productId: text("product_id").notNull(),
  depotId: text("depot_id").notNull(),
  remain: real("remain"),
  remainText: text("remain_text"),
  available: real("available"),
  availableText: text("available_text"),
  /** The depot entry (or the item, for totals) the level was read from. */
  record: text("record").notNull(),
  ...version,
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.productId, t.depotId] }),
  index("inventory_tenant_depot").on(t.appId, t.businessId, t.depotId)
])

/** Orders (order/list, orderAdd/orderUpdate), the columns people filter on read from the nested record. */
export const orders = sqliteTable("orders", {
  ...tenant,
  /** `info.id` (flat `id` in v2 payloads). */
  id: text("id").notNull(),
  /** `channel.appOrderId`, else the flat v2 appOrderId or its deprecated alias orderPrivateId. */
  appOrderId: text("app_order_id"),
  type: text("type"),
  /** `info.status`: the numeric code as text (v2: the status string as received). */
  status: text("status"),
  saleChannel: text("sale_channel"),
  depotId: text("depot_id"),
  /** `shippingAddress.id`, `.name`, `.mobile` (v2: customerName, customerMobile). */
  customerId: text("customer_id"),
  customerName: text("customer_name"),
  customerMobile: text("customer_mobile"),
  /** Sum of the lines (`Records.orderSummary`). */
  total: real("total"),
  totalText: text("total_text"),
  lineCount: integer("line_count").notNull().default(0),
  ...created,
  record: text("record").notNull(),
  ...version,
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("orders_tenant_app_order_id").on(t.appId, t.businessId, t.appOrderId),
  index("orders_tenant_mobile").on(t.appId, t.businessId, t.customerMobile),
  index("orders_tenant_status").on(t.appId, t.businessId, t.status),
  index("orders_tenant_created").on(t.appId, t.businessId, t.createdAtMs)
])

/** Line columns shared by order and bill lines. */
const line = {
  /** Position in the record's `products` array, from 0. */
  line: integer("line").notNull(),
  productId: text("product_id"),
  code: text("code"),
  name: text("name"),
  quantity: real("quantity"),
  price: real("price"),
  discount: real("discount"),
  /** The line as received, lossless JSON. */
  record: text("record").notNull()
}

/**
 * The lines of the order version the `orders` row holds: replaced whole, in the same
 * transaction, whenever that row is replaced (and cleared by a tombstone).
 */
export const orderItems = sqliteTable("order_items", {
  ...tenant,
  orderId: text("order_id").notNull(),
  ...line,
  /** `totalAmount`, else price x quantity - discount. */
  total: real("total")
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.orderId, t.line] }),
  index("order_items_tenant_product").on(t.appId, t.businessId, t.productId)
])

/** Bills (bill/list): stock movements and sales. They have no updated time: log position decides. */
export const bills = sqliteTable("bills", {
  ...tenant,
  id: text("id").notNull(),
  orderId: text("order_id"),
  depotId: text("depot_id"),
  /** The business date, `yyyy-mm-dd` as sent. */
  date: text("date"),
  type: text("type"),
  mode: text("mode"),
  customerId: text("customer_id"),
  customerName: text("customer_name"),
  customerMobile: text("customer_mobile"),
  /** `payment.amount`. */
  amount: real("amount"),
  amountText: text("amount_text"),
  /** `created.createdAt` (bill/retail: top-level `createdAt`). */
  ...created,
  record: text("record").notNull(),
  /** 1: tombstone (a bill/deleted record); content columns are null. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("bills_tenant_date").on(t.appId, t.businessId, t.date),
  index("bills_tenant_customer").on(t.appId, t.businessId, t.customerId)
])

/** The lines of the bill version the `bills` row holds (replaced with it). */
export const billItems = sqliteTable("bill_items", {
  ...tenant,
  billId: text("bill_id").notNull(),
  ...line,
  /** `amount` as sent. */
  amount: real("amount")
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.billId, t.line] })])

export const customers = sqliteTable("customers", {
  ...tenant,
  id: text("id").notNull(),
  /** 1 retail, 2 wholesale, 3 agent. */
  type: text("type"),
  code: text("code"),
  name: text("name"),
  mobile: text("mobile"),
  email: text("email"),
  points: real("points"),
  totalAmount: real("total_amount"),
  totalAmountText: text("total_amount_text"),
  /** `level.name` (else its id). */
  level: text("level"),
  /** `group.name` (else its id). */
  group: text("group"),
  record: text("record").notNull(),
  ...version,
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("customers_tenant_mobile").on(t.appId, t.businessId, t.mobile)
])

export const depots = sqliteTable("depots", {
  ...tenant,
  id: text("id").notNull(),
  code: text("code"),
  name: text("name"),
  mobile: text("mobile"),
  /** `location.address`, else `locationV2.address`. */
  address: text("address"),
  record: text("record").notNull(),
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.id] })])

export const categories = sqliteTable("categories", {
  ...tenant,
  id: text("id").notNull(),
  parentId: text("parent_id"),
  code: text("code"),
  name: text("name"),
  /** 1 active, 2 inactive. */
  status: text("status"),
  record: text("record").notNull(),
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.id] })])

export const brands = sqliteTable("brands", {
  ...tenant,
  id: text("id").notNull(),
  parentId: text("parent_id"),
  code: text("code"),
  name: text("name"),
  status: text("status"),
  record: text("record").notNull(),
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: integer("deleted").notNull().default(0),
  ...bookkeeping
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.id] })])

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
