/**
 * Stock per product and depot: inventoryChange webhooks and product/inventory pages
 * (docs/api-catalogue.md §2.1). `depot_id` is '' for a product's totals (a level that names no
 * depot). A pulled or webhook item is compared depot by depot with the product's rows.
 */
import { and, asc, eq } from "drizzle-orm"
import { index, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { ofTenant, when, withRecord } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import {
  amount, amountText, BOOKKEEPING, bookkeepingColumns, define, deletedColumn, type EventOf, held, row, Statement, stringify,
  type TableSpec, tenantColumns, textOf, toMillis, upsert, versionColumns
} from "./Projection.ts"

export const table = sqliteTable("inventory", {
  ...tenantColumns,
  productId: text("product_id").notNull(),
  depotId: text("depot_id").notNull(),
  remain: real("remain"),
  remainText: text("remain_text"),
  available: real("available"),
  availableText: text("available_text"),
  /** The depot entry (or the item, for totals) the level was read from. */
  record: text("record").notNull(),
  ...versionColumns,
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: deletedColumn(),
  ...bookkeepingColumns
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.productId, t.depotId] }),
  index("inventory_tenant_depot").on(t.appId, t.businessId, t.depotId)
])

const spec: TableSpec = {
  name: "inventory",
  key: ["app_id", "business_id", "product_id", "depot_id"],
  content: ["remain", "remain_text", "available", "available_text", "record", "updated_at", "updated_at_ms", "deleted"],
  versioned: true,
  rank: 0
}
const write = upsert(spec)

/**
 * Every depot's stock row of a product becomes a tombstone (InventoryDeleted: product/inventory no
 * longer serves it). The depots are whatever rows the file holds, so this is an update, not an
 * upsert; it touches only rows an earlier log position wrote, so a replay gives the same rows.
 * Binds: record, then the bookkeeping, then tenant, product, and the position (offset, index).
 */
const deleteAll = new Statement("inventory.deleted", `UPDATE inventory SET remain = NULL, remain_text = NULL, available = NULL, available_text = NULL,
  record = ?, deleted = 1, ${BOOKKEEPING.map((c) => `${c} = ?`).join(", ")}
  WHERE app_id = ? AND business_id = ? AND product_id = ? AND deleted = 0 AND (last_offset, last_index) < (?, ?)`)

/** Stock levels: one row per product and depot. `index` leaves room for every level of one event. */
const stock = (plan: Plan, record: ProjectableRecord, event: EventOf<"InventoryChanged" | "InventoryObserved">, index: number): void => {
  const items = event.items
  for (let i = 0; i < items.length; i++) {
    const level = items[i]!
    row(plan, write, [
      event.appId, event.businessId, level.productId, level.depotId,
      amount(level.remain), amountText(level.remain), amount(level.available), amountText(level.available),
      stringify(level.raw), textOf(level.updatedAt), toMillis(level.updatedAt), 0,
      ...held(event, record, index * 65536 + i)
    ])
  }
}

const stockDeleted = (plan: Plan, record: ProjectableRecord, event: EventOf<"InventoryDeleted">, index: number): void =>
  row(plan, deleteAll, [stringify(event.data), ...held(event, record, index), event.appId, event.businessId, event.productId, record.offset, index])

/** Change detection: a product's stock rows, compared depot by depot. */
export const compare = {
  current: "SELECT depot_id, remain_text, available_text, last_event_id FROM inventory WHERE app_id = ? AND business_id = ? AND product_id = ?"
} as const

export const inventory = define({
  tables: [spec],
  statements: [write, deleteAll],
  apply: { InventoryChanged: stock, InventoryObserved: stock, InventoryDeleted: stockDeleted },
  pass: { kind: "inventory", idColumn: "product_id", windowed: false, observed: { InventoryObserved: (event) => event.items[0]?.productId } },
  counts: { live: "inventory", tombstones: true },
  queries: (orm) => ({
    /** Stock levels per product and depot, ordered by product then depot. */
    inventory: (tenant: V.Tenant, options?: V.InventoryQuery): ReadonlyArray<V.StockLevel> => {
      const i = table
      return orm.select().from(i).where(and(
        ofTenant(i, tenant),
        eq(i.deleted, 0),
        when(options?.productId, (v) => eq(i.productId, v)),
        when(options?.depotId, (v) => eq(i.depotId, v))
      )).orderBy(asc(i.productId), asc(i.depotId)).all().map((r) => ({ ...withRecord(r), deleted: r.deleted === 1 }))
    }
  })
})
