/**
 * Bills and their lines: bill/list pages, bill/deleted records and the deletions a complete
 * full pass finds (docs/api-catalogue.md §5). Bills have no updated time: the log position alone
 * decides. The lines are those of the version the bill row holds.
 */
import { Records } from "@ocs/protocol"
import { and, asc, eq, gte, lte } from "drizzle-orm"
import { index, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { byId, entityPage, limitOf, ofTenant, page, when, withRecord } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { lineColumns } from "./orders.ts"
import {
  amount, amountText, bookkeepingColumns, createdColumns, define, deletedColumn, entityTable, type EventFacts, type EventOf, held, id,
  lines, row, stringify, type TableSpec, tenantColumns, textOf, toMillis, upsert
} from "./Projection.ts"
import { unknown } from "./unknownEvents.ts"

/** Bills (bill/list): stock movements and sales. They have no updated time: log position decides. */
export const table = sqliteTable("bills", {
  ...tenantColumns,
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
  ...createdColumns,
  record: text("record").notNull(),
  /** 1: tombstone (a bill/deleted record); content columns are null. */
  deleted: deletedColumn(),
  ...bookkeepingColumns
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("bills_tenant_date").on(t.appId, t.businessId, t.date),
  index("bills_tenant_customer").on(t.appId, t.businessId, t.customerId)
])

/** The lines of the bill version the `bills` row holds (replaced with it). */
export const itemsTable = sqliteTable("bill_items", {
  ...tenantColumns,
  billId: text("bill_id").notNull(),
  ...lineColumns(),
  /** `amount` as sent. */
  amount: real("amount")
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.billId, t.line] })])

const spec = entityTable(
  "bills",
  [
    "order_id", "depot_id", "date", "type", "mode", "customer_id", "customer_name", "customer_mobile",
    "amount", "amount_text", "created_at", "created_at_ms", "record", "deleted"
  ],
  // bill/list has no updated time (docs/api-catalogue.md §5.1): the log position decides.
  false
)
const itemsSpec: TableSpec = {
  name: "bill_items",
  key: ["app_id", "business_id", "bill_id", "line"],
  content: ["product_id", "code", "name", "quantity", "price", "discount", "amount", "record"],
  rank: 1
}
const write = upsert(spec)
const items = lines(itemsSpec, "bills")

const bill = (plan: Plan, record: ProjectableRecord, event: EventOf<"BillObserved">, index: number): void => {
  const b = event.bill
  const billId = Records.recordId(b)
  if (billId === undefined) return unknown(plan, record, event, record.type, "BillObserved: bill without id", b)
  // bill/list: `created.createdAt`; bill/retail: a top-level `createdAt`.
  const createdAt = b.created?.createdAt ?? b.createdAt
  const paid = b.payment?.amount
  row(plan, write, [
    event.appId, event.businessId, billId,
    id(b, "orderId"), id(b, "depotId"), textOf(b.date), textOf(b.type), textOf(b.mode),
    id(b, "customer.id"), textOf(b.customer?.name), textOf(b.customer?.mobile),
    amount(paid), amountText(paid), textOf(createdAt), toMillis(createdAt),
    stringify(b), 0,
    ...held(event, record, index)
  ])
  const parent = [event.appId, event.businessId, billId, event.id]
  row(plan, items.clear, [event.appId, event.businessId, billId, ...parent])
  const billLines = b.products ?? []
  for (let i = 0; i < billLines.length; i++) {
    const l = billLines[i]!
    row(plan, items.line, [
      event.appId, event.businessId, billId, i,
      id(l, "id") ?? id(l, "productId"), textOf(l.code), textOf(l.name),
      amount(l.quantity), amount(l.price), amount(l.discount), amount(l.amount), stringify(l),
      ...parent
    ])
  }
}

/** A bill tombstone (a bill/deleted record, or a pass's deletion): no content, no lines. */
export const billDeleted = (plan: Plan, record: ProjectableRecord, event: EventFacts & { readonly businessId: string }, billId: string, data: unknown, index: number): void => {
  row(plan, write, [
    event.appId, event.businessId, billId,
    null, null, null, null, null, null, null, null, null, null, null, null,
    stringify(data), 1,
    ...held(event, record, index)
  ])
  row(plan, items.clear, [event.appId, event.businessId, billId, event.appId, event.businessId, billId, event.id])
}

const toBill = (r: typeof table.$inferSelect): V.Bill => ({ ...withRecord(r), deleted: r.deleted === 1 })

export const bills = define({
  tables: [spec, itemsSpec],
  statements: [write, items.clear, items.line],
  apply: {
    BillObserved: bill,
    BillDeleted: (plan, record, event, index) => billDeleted(plan, record, event, event.billId, event.data, index)
  },
  pass: { kind: "bill", idColumn: "id", windowed: true, observed: { BillObserved: (event) => Records.recordId(event.bill) } },
  counts: { live: "bills", deleted: "deletedBills", tombstones: true },
  queries: (orm) => ({
    bills: (tenant: V.Tenant, options?: V.BillQuery): V.Page<V.Bill> => {
      const limit = limitOf(options)
      const b = table
      const rows = orm.select().from(b).where(and(
        ...entityPage(b, tenant, options),
        when(options?.type, (v) => eq(b.type, v)),
        when(options?.depotId, (v) => eq(b.depotId, v)),
        when(options?.customerId, (v) => eq(b.customerId, v)),
        // yyyy-mm-dd compares as text in date order.
        when(options?.fromDate, (v) => gte(b.date, v)),
        when(options?.toDate, (v) => lte(b.date, v))
      )).orderBy(asc(b.id)).limit(limit).all()
      return page(rows.map(toBill), limit)
    },
    /** The bill (tombstones included) with its lines. */
    bill: (tenant: V.Tenant, billId: string): V.BillDetail | undefined => {
      const found = orm.select().from(table).where(byId(table, tenant, billId)).get()
      if (found === undefined) return undefined
      const i = itemsTable
      const rows = orm.select().from(i).where(and(ofTenant(i, tenant), eq(i.billId, billId))).orderBy(asc(i.line)).all()
      return { ...toBill(found), items: rows.map(withRecord) }
    }
  })
})
