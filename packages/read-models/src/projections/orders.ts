/**
 * Orders and their lines: orderAdd/Update/Delete webhooks, order/list pages and order/deleted
 * records (docs/api-catalogue.md §3). The columns people filter on are read from the nested
 * record; the lines are those of the version the order row holds. A pulled or webhook order is
 * compared with its row (changed fields, and its status: OrderStatusChanged).
 */
import { Records } from "@ocs/protocol"
import { and, asc, eq, gte, lte } from "drizzle-orm"
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { byId, entityPage, limitOf, ofTenant, page, when, withRecord } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import {
  amount, createdColumns, define, deletedAt, deletion, entityColumns, entityTable, type EventFacts, type EventOf, held, id, lines,
  row, stringify, type TableSpec, tenantColumns, textOf, toMillis, upsert
} from "./Projection.ts"
import { unknown } from "./unknownEvents.ts"

// `id`: `info.id` (the flat `id` of v2 payloads).
export const table = sqliteTable("orders", entityColumns({
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
  ...createdColumns
}), (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("orders_tenant_app_order_id").on(t.appId, t.businessId, t.appOrderId),
  index("orders_tenant_mobile").on(t.appId, t.businessId, t.customerMobile),
  index("orders_tenant_status").on(t.appId, t.businessId, t.status),
  index("orders_tenant_created").on(t.appId, t.businessId, t.createdAtMs)
])

/** Line columns shared by order and bill lines. */
export const lineColumns = () => ({
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
})

/**
 * The lines of the order version the `orders` row holds: replaced whole, in the same
 * transaction, whenever that row is replaced (and cleared by a tombstone).
 */
export const itemsTable = sqliteTable("order_items", {
  ...tenantColumns,
  orderId: text("order_id").notNull(),
  ...lineColumns(),
  /** `totalAmount`, else price x quantity - discount. */
  total: real("total")
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.orderId, t.line] }),
  index("order_items_tenant_product").on(t.appId, t.businessId, t.productId)
])

const spec = entityTable(
  "orders",
  [
    "app_order_id", "type", "status", "sale_channel", "depot_id", "customer_id", "customer_name", "customer_mobile",
    "total", "total_text", "line_count", "created_at", "created_at_ms", "record", "updated_at", "updated_at_ms", "deleted"
  ],
  true
)
const itemsSpec: TableSpec = {
  name: "order_items",
  key: ["app_id", "business_id", "order_id", "line"],
  content: ["product_id", "code", "name", "quantity", "price", "discount", "total", "record"],
  rank: 1
}
const write = upsert(spec)
const items = lines(itemsSpec, "orders")

/** An integer as sent, exactly (for sums beyond 2^53), or undefined. */
const exact = (value: unknown): bigint | undefined => {
  if (typeof value === "bigint") return value
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : undefined
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return BigInt(value.trim())
  return undefined
}

/** A line's total as `Records.orderSummary` counts it: totalAmount, else price x quantity - discount. */
const lineTotal = (l: Records.OrderLine): number =>
  Records.toNumber(l.totalAmount) ?? (Records.toNumber(l.price) ?? 0) * (Records.toNumber(l.quantity) ?? 0) - (Records.toNumber(l.discount) ?? 0)

/** The order total as text, digit for digit when every part is an integer (money is, in VND). */
const totalText = (orderLines: ReadonlyArray<Records.OrderLine>, total: number): string => {
  let sum = 0n
  for (const l of orderLines) {
    const t = l.totalAmount === null || l.totalAmount === undefined
      ? (() => {
        const [p, q, d] = [exact(l.price ?? 0), exact(l.quantity ?? 0), exact(l.discount ?? 0)]
        return p === undefined || q === undefined || d === undefined ? undefined : p * q - d
      })()
      : exact(l.totalAmount)
    if (t === undefined) return stringify(total)
    sum += t
  }
  return sum.toString()
}

const order = (plan: Plan, record: ProjectableRecord, event: EventOf<"OrderAdded" | "OrderUpdated" | "OrderObserved">, index: number): void => {
  const o = event.order
  const s = Records.orderSummary(o)
  if (s.id === undefined) return unknown(plan, record, event, record.type, `${event._tag}: order without id`, o)
  const orderLines = o.products ?? []
  row(plan, write, [
    event.appId, event.businessId, s.id,
    s.appOrderId ?? null, s.type ?? null, s.status ?? null, s.saleChannel ?? null, s.depotId ?? null,
    s.customerId ?? null, s.customerName ?? null, s.customerMobile ?? null,
    s.total, totalText(orderLines, s.total), s.lineCount, textOf(s.createdAt), toMillis(s.createdAt),
    stringify(o), textOf(s.updatedAt), toMillis(s.updatedAt), 0,
    ...held(event, record, index)
  ])
  const parent = [event.appId, event.businessId, s.id, event.id]
  row(plan, items.clear, [event.appId, event.businessId, s.id, ...parent])
  for (let i = 0; i < orderLines.length; i++) {
    const l = orderLines[i]!
    row(plan, items.line, [
      event.appId, event.businessId, s.id, i,
      // order/list names the product `productId`; the webhook payload names it `id`.
      id(l, "productId") ?? id(l, "id"), textOf(l.code), textOf(l.name),
      amount(l.quantity), amount(l.price), amount(l.discount), lineTotal(l), stringify(l),
      ...parent
    ])
  }
}

/** An order tombstone (orderDelete, or an order/deleted record): no content, no lines. */
export const orderDeleted = (plan: Plan, record: ProjectableRecord, event: EventFacts & { readonly businessId: string }, orderId: string, data: unknown, updatedAt: unknown, index: number): void => {
  row(plan, write, [
    event.appId, event.businessId, orderId,
    null, null, null, null, null, null, null, null, null, null, 0, null, null,
    stringify(data), textOf(updatedAt), deletedAt(event, updatedAt), 1,
    ...held(event, record, index)
  ])
  row(plan, items.clear, [event.appId, event.businessId, orderId, event.appId, event.businessId, orderId, event.id])
}

const orderDeletedEvent = (plan: Plan, record: ProjectableRecord, event: EventOf<"OrderDeleted">, index: number): void => {
  if (event.orderId === undefined) return unknown(plan, record, event, record.type, "OrderDeleted: without id", deletion(event.data))
  orderDeleted(plan, record, event, event.orderId, deletion(event.data), Records.valueAt(event.data, "updatedAt"), index)
}

/** Change detection: the row an order event replaces (its status gives OrderStatusChanged). */
export const compare = {
  current: "SELECT record, deleted, status, last_event_id FROM orders WHERE app_id = ? AND business_id = ? AND id = ?",
  ignoredFields: []
} as const

const toOrder = (r: typeof table.$inferSelect): V.Order => ({ ...withRecord(r), deleted: r.deleted === 1 })

export const orders = define({
  tables: [spec, itemsSpec],
  statements: [write, items.clear, items.line],
  apply: {
    OrderAdded: order,
    OrderUpdated: order,
    OrderObserved: order,
    OrderDeleted: orderDeletedEvent,
    // The order's row is written by the OrderUpdated of the same change (or the webhook
    // before it); the status change is for plugins.
    OrderStatusChanged: () => {}
  },
  pass: { kind: "order", idColumn: "id", windowed: true, observed: { OrderObserved: (event) => Records.orderIdOf(event.order) } },
  counts: { live: "orders", deleted: "deletedOrders", tombstones: true },
  queries: (orm) => ({
    orders: (tenant: V.Tenant, options?: V.OrderQuery): V.Page<V.Order> => {
      const limit = limitOf(options)
      const o = table
      const rows = orm.select().from(o).where(and(
        ...entityPage(o, tenant, options),
        when(options?.status, (v) => eq(o.status, v)),
        when(options?.saleChannel, (v) => eq(o.saleChannel, v)),
        when(options?.depotId, (v) => eq(o.depotId, v)),
        when(options?.appOrderId, (v) => eq(o.appOrderId, v)),
        when(options?.customerMobile, (v) => eq(o.customerMobile, v)),
        when(options?.createdFromMs, (v) => gte(o.createdAtMs, v)),
        when(options?.createdToMs, (v) => lte(o.createdAtMs, v)),
        when(options?.updatedFromMs, (v) => gte(o.updatedAtMs, v)),
        when(options?.updatedToMs, (v) => lte(o.updatedAtMs, v))
      )).orderBy(asc(o.id)).limit(limit).all()
      return page(rows.map(toOrder), limit)
    },
    /** The order (tombstones included) with its lines. */
    order: (tenant: V.Tenant, orderId: string): V.OrderDetail | undefined => {
      const found = orm.select().from(table).where(byId(table, tenant, orderId)).get()
      if (found === undefined) return undefined
      const i = itemsTable
      const rows = orm.select().from(i).where(and(ofTenant(i, tenant), eq(i.orderId, orderId))).orderBy(asc(i.line)).all()
      return { ...toOrder(found), items: rows.map(withRecord) }
    }
  })
})
