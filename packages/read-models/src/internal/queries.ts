/**
 * The read API as synchronous drizzle queries (wrapped in Effects by ReadModels.ts). Every
 * query starts with the tenant condition.
 */
import { and, asc, count, eq, gt, type SQL } from "drizzle-orm"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import * as T from "../Tables.ts"
import type * as V from "../Views.ts"
import { contains, limitOf, ofTenant, page, parse, when } from "./queryKit.ts"
import * as ReferenceQueries from "./referenceQueries.ts"
import * as SalesQueries from "./salesQueries.ts"

const toProduct = (row: typeof T.products.$inferSelect): V.Product => ({ ...row, record: parse(row.record), deleted: row.deleted === 1 })
const toPayment = (row: typeof T.payments.$inferSelect): V.Payment => ({ ...row, record: parse(row.record) })
const toDocument = (row: typeof T.documents.$inferSelect): V.Document => ({ ...row, body: parse(row.body) })

type Counted =
  | typeof T.products | typeof T.orders | typeof T.bills | typeof T.inventory | typeof T.customers | typeof T.depots
  | typeof T.categories | typeof T.brands | typeof T.payments | typeof T.documents | typeof T.unknownEvents

export const make = (orm: BetterSQLite3Database) => {
  const products = (tenant: V.Tenant, options?: V.ProductQuery): V.Page<V.Product> => {
    const limit = limitOf(options)
    const p = T.products
    const rows = orm.select().from(p).where(and(
      ofTenant(p, tenant),
      options?.includeDeleted === true ? undefined : eq(p.deleted, 0),
      when(options?.after, (v) => gt(p.id, v)),
      contains(options?.search, [p.name, p.code, p.barcode, p.appProductId])
    )).orderBy(asc(p.id)).limit(limit).all()
    return page(rows.map(toProduct), limit)
  }

  const product = (tenant: V.Tenant, id: string): V.Product | undefined => {
    const row = orm.select().from(T.products).where(and(ofTenant(T.products, tenant), eq(T.products.id, id))).get()
    return row === undefined ? undefined : toProduct(row)
  }

  const payments = (tenant: V.Tenant, options?: V.PaymentQuery): V.Page<V.Payment> => {
    const limit = limitOf(options)
    const p = T.payments
    const rows = orm.select().from(p).where(and(
      ofTenant(p, tenant),
      when(options?.after, (v) => gt(p.id, v)),
      when(options?.orderId, (v) => eq(p.orderId, v)),
      when(options?.invoiceId, (v) => eq(p.invoiceId, v))
    )).orderBy(asc(p.id)).limit(limit).all()
    return page(rows.map(toPayment), limit)
  }

  const documents = (tenant: V.Tenant, kind: string, options?: V.PageOptions): V.Page<V.Document> => {
    const limit = limitOf(options)
    const d = T.documents
    const rows = orm.select().from(d).where(and(
      ofTenant(d, tenant),
      eq(d.kind, kind),
      options?.after === undefined ? undefined : gt(d.id, options.after)
    )).orderBy(asc(d.id)).limit(limit).all()
    return page(rows.map(toDocument), limit)
  }

  const document = (tenant: V.Tenant, kind: string, id: string): V.Document | undefined => {
    const d = T.documents
    const row = orm.select().from(d).where(and(ofTenant(d, tenant), eq(d.kind, kind), eq(d.id, id))).get()
    return row === undefined ? undefined : toDocument(row)
  }

  /** Application-level: the row of `tenant.appId` (webhooksEnabled has no business). */
  const webhooks = (tenant: V.Tenant): V.WebhooksEnabled | undefined => {
    const w = T.webhooksEnabled
    const row = orm.select().from(w).where(and(eq(w.appId, tenant.appId), eq(w.businessId, ""))).get()
    return row === undefined ? undefined : { ...row, registeredEvents: parse(row.registeredEvents) }
  }

  const unknownEvents = (tenant: V.Tenant, options?: V.PageOptions): V.Page<V.UnknownEvent & { readonly id: string }> => {
    const limit = limitOf(options)
    const u = T.unknownEvents
    const rows = orm.select().from(u).where(and(
      ofTenant(u, tenant),
      options?.after === undefined ? undefined : gt(u.eventId, options.after)
    )).orderBy(asc(u.eventId)).limit(limit).all()
    return page(rows.map((r) => ({ ...r, id: r.eventId })), limit)
  }

  const countOf = (table: Counted, tenant: V.Tenant, extra?: SQL) =>
    orm.select({ n: count() }).from(table).where(and(ofTenant(table, tenant), extra)).get()?.n ?? 0

  const counts = (tenant: V.Tenant): V.Counts => ({
    products: countOf(T.products, tenant, eq(T.products.deleted, 0)),
    deletedProducts: countOf(T.products, tenant, eq(T.products.deleted, 1)),
    inventory: countOf(T.inventory, tenant, eq(T.inventory.deleted, 0)),
    orders: countOf(T.orders, tenant, eq(T.orders.deleted, 0)),
    deletedOrders: countOf(T.orders, tenant, eq(T.orders.deleted, 1)),
    bills: countOf(T.bills, tenant, eq(T.bills.deleted, 0)),
    deletedBills: countOf(T.bills, tenant, eq(T.bills.deleted, 1)),
    customers: countOf(T.customers, tenant, eq(T.customers.deleted, 0)),
    depots: countOf(T.depots, tenant, eq(T.depots.deleted, 0)),
    categories: countOf(T.categories, tenant, eq(T.categories.deleted, 0)),
    brands: countOf(T.brands, tenant, eq(T.brands.deleted, 0)),
    payments: countOf(T.payments, tenant),
    documents: countOf(T.documents, tenant),
    unknownEvents: countOf(T.unknownEvents, tenant)
  })

  /** Rows per resource over every tenant (tombstones included), for `/metrics`. */
  const rowCounts = (): Readonly<Record<string, number>> => {
    const all = (table: Counted) => orm.select({ n: count() }).from(table).get()?.n ?? 0
    return {
      products: all(T.products),
      inventory: all(T.inventory),
      orders: all(T.orders),
      bills: all(T.bills),
      customers: all(T.customers),
      depots: all(T.depots),
      categories: all(T.categories),
      brands: all(T.brands),
      payments: all(T.payments),
      documents: all(T.documents),
      unknown_events: all(T.unknownEvents)
    }
  }

  return {
    ...SalesQueries.make(orm), ...ReferenceQueries.make(orm),
    products, product, payments, documents, document, webhooks, unknownEvents, counts, rowCounts
  }
}
