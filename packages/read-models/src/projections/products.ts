/**
 * Products: productAdd/Update/Delete webhooks and product/list pages, one row per product
 * (docs/api-catalogue.md §2.1). A pulled or webhook product is compared with its row for change
 * detection (its `inventory` is not: stock has its own feed).
 */
import { Records } from "@ocs/protocol"
import { and, asc } from "drizzle-orm"
import { index, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { byId, contains, entityPage, limitOf, page, parse } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import {
  amount, amountText, define, deletedAt, deletion, entityColumns, entityTable, type EventOf, held, id, row, stringify, textOf,
  toMillis, upsert
} from "./Projection.ts"
import { unknown } from "./unknownEvents.ts"

export const table = sqliteTable("products", entityColumns({
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
  brandId: text("brand_id")
}), (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("products_tenant_name").on(t.appId, t.businessId, t.name),
  index("products_tenant_app_product_id").on(t.appId, t.businessId, t.appProductId)
])

const spec = entityTable(
  "products",
  ["app_product_id", "code", "barcode", "name", "price", "price_text", "category_id", "brand_id", "record", "updated_at", "updated_at_ms", "deleted"],
  true
)
const write = upsert(spec)

const product = (plan: Plan, record: ProjectableRecord, event: EventOf<"ProductAdded" | "ProductUpdated" | "ProductObserved">, index: number): void => {
  const p = event.product
  const productId = Records.recordId(p)
  if (productId === undefined) return unknown(plan, record, event, record.type, `${event._tag}: product without id`, p)
  // product/list nests prices; older payloads send a flat price.
  const price = p.prices?.retail ?? p["price"]
  row(plan, write, [
    event.appId, event.businessId, productId,
    textOf(p.appProductId), textOf(p.code), textOf(p.barcode), textOf(p.name), amount(price), amountText(price),
    id(p, "categoryId") ?? id(p, "category.id"), id(p, "brandId") ?? id(p, "brand.id"),
    stringify(p), textOf(p.updatedAt), toMillis(p.updatedAt), 0,
    ...held(event, record, index)
  ])
}

const productDeleted = (plan: Plan, record: ProjectableRecord, event: EventOf<"ProductDeleted">, index: number): void => {
  if (event.productId === undefined) return unknown(plan, record, event, record.type, "ProductDeleted: without id", deletion(event.data))
  const updatedAt = Records.valueAt(event.data, "updatedAt")
  row(plan, write, [
    event.appId, event.businessId, event.productId,
    null, null, null, null, null, null, null, null,
    stringify(deletion(event.data)), textOf(updatedAt), deletedAt(event, updatedAt), 1,
    ...held(event, record, index)
  ])
}

/** Change detection: the row a product event replaces, and the fields never compared. */
export const compare = {
  current: "SELECT record, deleted, last_event_id FROM products WHERE app_id = ? AND business_id = ? AND id = ?",
  /** Stock moves without moving the product's updatedAt, and product/inventory is its own feed (docs/api-catalogue.md §2.1). */
  ignoredFields: ["inventory"]
} as const

const toProduct = (row: typeof table.$inferSelect): V.Product => ({ ...row, record: parse(row.record), deleted: row.deleted === 1 })

export const products = define({
  tables: [spec],
  statements: [write],
  apply: { ProductAdded: product, ProductUpdated: product, ProductObserved: product, ProductDeleted: productDeleted },
  pass: { kind: "product", idColumn: "id", windowed: false, observed: { ProductObserved: (event) => Records.recordId(event.product) } },
  counts: { live: "products", deleted: "deletedProducts", tombstones: true },
  queries: (orm) => ({
    products: (tenant: V.Tenant, options?: V.ProductQuery): V.Page<V.Product> => {
      const limit = limitOf(options)
      const p = table
      const rows = orm.select().from(p).where(and(
        ...entityPage(p, tenant, options),
        contains(options?.search, [p.name, p.code, p.barcode, p.appProductId])
      )).orderBy(asc(p.id)).limit(limit).all()
      return page(rows.map(toProduct), limit)
    },
    product: (tenant: V.Tenant, productId: string): V.Product | undefined => {
      const found = orm.select().from(table).where(byId(table, tenant, productId)).get()
      return found === undefined ? undefined : toProduct(found)
    }
  })
})
