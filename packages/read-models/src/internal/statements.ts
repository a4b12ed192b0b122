/**
 * The projector's statements as data: column lists, the upsert SQL that carries the conflict
 * rule, and the child-row statements that keep order and bill lines with the version of their
 * parent the table holds. Pure (no database): the planner thread loads it through ./plan.ts.
 */

const BOOKKEEPING = ["last_event_id", "last_offset", "last_index", "last_source", "last_received_at"] as const

/**
 * The conflict rule, in SQL: the incoming row (`excluded`) wins when both carry a parsed
 * updatedAt and they differ and it is newer; otherwise (equal, or absent on either side) when it
 * comes later in the log (offset, then index inside the record). Tables without an updated
 * time use the log position alone.
 */
const newer = (table: string, versioned: boolean) => {
  const position = `(excluded.last_offset, excluded.last_index) > (${table}.last_offset, ${table}.last_index)`
  if (!versioned) return position
  return `CASE WHEN excluded.updated_at_ms IS NOT NULL AND ${table}.updated_at_ms IS NOT NULL
    AND excluded.updated_at_ms <> ${table}.updated_at_ms
    THEN excluded.updated_at_ms > ${table}.updated_at_ms ELSE ${position} END`
}

/** A column name quoted (`group` is an SQL keyword). */
export const quote = (column: string) => `"${column}"`

const upsertSql = (table: string, key: ReadonlyArray<string>, content: ReadonlyArray<string>, versioned: boolean) => {
  const columns = [...key, ...content, ...BOOKKEEPING]
  const set = [...content, ...BOOKKEEPING].map((c) => `${quote(c)} = excluded.${quote(c)}`).join(", ")
  return `INSERT INTO ${table} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
    ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${set} WHERE ${newer(table, versioned)}`
}

/** Column lists, in the order the statements bind them; `versioned` tables carry updated_at(_ms). */
export const columns = {
  products: {
    key: ["app_id", "business_id", "id"],
    content: ["app_product_id", "code", "barcode", "name", "price", "price_text", "category_id", "brand_id", "record", "updated_at", "updated_at_ms", "deleted"],
    versioned: true
  },
  inventory: {
    key: ["app_id", "business_id", "product_id", "depot_id"],
    content: ["remain", "remain_text", "available", "available_text", "record", "updated_at", "updated_at_ms", "deleted"],
    versioned: true
  },
  orders: {
    key: ["app_id", "business_id", "id"],
    content: [
      "app_order_id", "type", "status", "sale_channel", "depot_id", "customer_id", "customer_name", "customer_mobile",
      "total", "total_text", "line_count", "created_at", "created_at_ms", "record", "updated_at", "updated_at_ms", "deleted"
    ],
    versioned: true
  },
  bills: {
    key: ["app_id", "business_id", "id"],
    content: [
      "order_id", "depot_id", "date", "type", "mode", "customer_id", "customer_name", "customer_mobile",
      "amount", "amount_text", "created_at", "created_at_ms", "record", "deleted"
    ],
    // bill/list has no updated time (docs/api-catalogue.md §5.1): the log position decides.
    versioned: false
  },
  customers: {
    key: ["app_id", "business_id", "id"],
    content: ["type", "code", "name", "mobile", "email", "points", "total_amount", "total_amount_text", "level", "group", "record", "updated_at", "updated_at_ms", "deleted"],
    versioned: true
  },
  depots: { key: ["app_id", "business_id", "id"], content: ["code", "name", "mobile", "address", "record", "deleted"], versioned: false },
  categories: { key: ["app_id", "business_id", "id"], content: ["parent_id", "code", "name", "status", "record", "deleted"], versioned: false },
  brands: { key: ["app_id", "business_id", "id"], content: ["parent_id", "code", "name", "status", "record", "deleted"], versioned: false },
  payments: {
    key: ["app_id", "business_id", "id"],
    content: ["order_id", "invoice_id", "amount", "amount_text", "method", "record", "updated_at", "updated_at_ms"],
    versioned: true
  },
  documents: { key: ["app_id", "business_id", "kind", "id"], content: ["body", "updated_at", "updated_at_ms"], versioned: true },
  webhooks_enabled: { key: ["app_id", "business_id"], content: ["registered_events"], versioned: false }
} as const

/** Lines of a parent row: replaced only when the parent row holds the event's version. */
export const children = {
  order_items: {
    parent: "orders",
    key: ["app_id", "business_id", "order_id", "line"],
    content: ["product_id", "code", "name", "quantity", "price", "discount", "total", "record"]
  },
  bill_items: {
    parent: "bills",
    key: ["app_id", "business_id", "bill_id", "line"],
    content: ["product_id", "code", "name", "quantity", "price", "discount", "amount", "record"]
  }
} as const

/**
 * The parent row holds this event's version exactly when its `last_event_id` is the event's id:
 * event ids are unique, and an event that lost the conflict rule left the row untouched. So the
 * lines follow the winning version whatever order the versions arrive in.
 */
const heldBy = (parent: string) =>
  `EXISTS (SELECT 1 FROM ${parent} p WHERE p.app_id = ? AND p.business_id = ? AND p.id = ? AND p.last_event_id = ?)`

/** Clears a parent's lines when the parent row holds the event's version. Binds: tenant, parent id, event id. */
const clearSql = (table: keyof typeof children) => {
  const c = children[table]
  return `DELETE FROM ${table} WHERE app_id = ? AND business_id = ? AND ${c.key[2]} = ? AND ${heldBy(c.parent)}`
}

/** Writes one line when the parent row holds the event's version. Binds: the row, then tenant, parent id, event id. */
const lineSql = (table: keyof typeof children) => {
  const c = children[table]
  const cols = [...c.key, ...c.content]
  return `INSERT OR REPLACE INTO ${table} (${cols.map(quote).join(", ")}) SELECT ${cols.map(() => "?").join(", ")} WHERE ${heldBy(c.parent)}`
}

const upsert = (table: keyof typeof columns) => upsertSql(table, columns[table].key, columns[table].content, columns[table].versioned)

/**
 * Every depot's stock row of a product becomes a tombstone (InventoryDeleted: product/inventory no
 * longer serves it). The depots are whatever rows the file holds, so this is an update, not an
 * upsert; it touches only rows an earlier log position wrote, so a replay gives the same rows.
 * Binds: record, then the bookkeeping, then tenant, product, and the position (offset, index).
 */
const inventoryDeletedSql = `UPDATE inventory SET remain = NULL, remain_text = NULL, available = NULL, available_text = NULL,
  record = ?, deleted = 1, ${BOOKKEEPING.map((c) => `${c} = ?`).join(", ")}
  WHERE app_id = ? AND business_id = ? AND product_id = ? AND deleted = 0 AND (last_offset, last_index) < (?, ?)`

/** Which statement a planned row goes to (index into `opStatements`). */
export const Op = {
  products: 0,
  inventory: 1,
  orders: 2,
  payments: 3,
  documents: 4,
  webhooks: 5,
  unknown: 6,
  bills: 7,
  customers: 8,
  depots: 9,
  categories: 10,
  brands: 11,
  orderItemsClear: 12,
  orderItem: 13,
  billItemsClear: 14,
  billItem: 15,
  inventoryDeleted: 16
} as const
export type Op = typeof Op[keyof typeof Op]

export const statementsSql = {
  applied: "INSERT OR IGNORE INTO applied_records (offset) VALUES (?)",
  unknown_events: `INSERT OR IGNORE INTO unknown_events
    (app_id, business_id, event_id, record_id, offset, source, type, reason, data, received_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
} as const

/** The statements in `Op` order. */
export const opStatements: ReadonlyArray<string> = [
  upsert("products"),
  upsert("inventory"),
  upsert("orders"),
  upsert("payments"),
  upsert("documents"),
  upsert("webhooks_enabled"),
  statementsSql.unknown_events,
  upsert("bills"),
  upsert("customers"),
  upsert("depots"),
  upsert("categories"),
  upsert("brands"),
  clearSql("order_items"),
  lineSql("order_items"),
  clearSql("bill_items"),
  lineSql("bill_items"),
  inventoryDeletedSql
]

/** The projected tables and their key and content columns (for digests and comparisons). */
export const projectedTables: ReadonlyArray<{ readonly name: string; readonly key: ReadonlyArray<string>; readonly content: ReadonlyArray<string> }> = [
  ...Object.entries(columns).map(([name, c]) => ({ name, key: c.key, content: c.content })),
  ...Object.entries(children).map(([name, c]) => ({ name, key: c.key, content: c.content })),
  { name: "unknown_events", key: ["app_id", "business_id", "event_id"], content: ["record_id", "source", "type", "reason", "data"] }
]
