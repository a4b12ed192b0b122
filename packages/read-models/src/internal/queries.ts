/**
 * The read API as synchronous drizzle queries (wrapped in Effects by ReadModels.ts). Every
 * query starts with the tenant condition.
 */
import { Json } from "@ocs/protocol"
import { and, asc, count, eq, gt, gte, lte, or, sql, type SQL } from "drizzle-orm"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import type { SQLiteColumn } from "drizzle-orm/sqlite-core"
import { Result } from "effect"
import * as T from "../Tables.ts"
import type * as V from "../Views.ts"

const MAX_LIMIT = 1000

const limitOf = (options: V.PageOptions | undefined) =>
  Math.max(1, Math.min(MAX_LIMIT, Math.trunc(options?.limit ?? 100)))

/** Stored JSON is written by `Json.stringify`; a row that does not parse is kept as its text. */
const parse = (text: string | null): Json.JsonValue => {
  if (text === null) return null
  const r = Json.parse(text)
  return Result.isSuccess(r) ? r.success : text
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

const ofTenant = (table: { appId: SQLiteColumn; businessId: SQLiteColumn }, tenant: V.Tenant) =>
  and(eq(table.appId, tenant.appId), eq(table.businessId, tenant.businessId))

const page = <A extends { readonly id: string }>(items: ReadonlyArray<A>, limit: number): V.Page<A> => ({
  items,
  next: items.length === limit ? items[items.length - 1]!.id : undefined
})

const toProduct = (row: typeof T.products.$inferSelect): V.Product => ({ ...row, record: parse(row.record), deleted: row.deleted === 1 })
const toOrder = (row: typeof T.orders.$inferSelect): V.Order => {
  const lines = parse(row.lines)
  return { ...row, record: parse(row.record), deleted: row.deleted === 1, lines: Array.isArray(lines) ? lines : [] }
}
const toStock = (row: typeof T.inventory.$inferSelect): V.StockLevel => ({ ...row, record: parse(row.record) })
const toPayment = (row: typeof T.payments.$inferSelect): V.Payment => ({ ...row, record: parse(row.record) })
const toDocument = (row: typeof T.documents.$inferSelect): V.Document => ({ ...row, body: parse(row.body) })

export const make = (orm: BetterSQLite3Database) => {
  const products = (tenant: V.Tenant, options?: V.ProductQuery): V.Page<V.Product> => {
    const limit = limitOf(options)
    const conditions: Array<SQL | undefined> = [ofTenant(T.products, tenant)]
    if (options?.includeDeleted !== true) conditions.push(eq(T.products.deleted, 0))
    if (options?.after !== undefined) conditions.push(gt(T.products.id, options.after))
    if (options?.search !== undefined && options.search.length > 0) {
      const pattern = `%${escapeLike(options.search)}%`
      const match = (c: SQLiteColumn) => sql`${c} LIKE ${pattern} ESCAPE '\\'`
      conditions.push(or(match(T.products.name), match(T.products.code), match(T.products.barcode), match(T.products.appProductId)))
    }
    const rows = orm.select().from(T.products).where(and(...conditions)).orderBy(asc(T.products.id)).limit(limit).all()
    return page(rows.map(toProduct), limit)
  }

  const product = (tenant: V.Tenant, id: string): V.Product | undefined => {
    const row = orm.select().from(T.products).where(and(ofTenant(T.products, tenant), eq(T.products.id, id))).get()
    return row === undefined ? undefined : toProduct(row)
  }

  const inventory = (tenant: V.Tenant, productId?: string): ReadonlyArray<V.StockLevel> =>
    orm.select().from(T.inventory)
      .where(and(ofTenant(T.inventory, tenant), productId === undefined ? undefined : eq(T.inventory.productId, productId)))
      .orderBy(asc(T.inventory.productId), asc(T.inventory.depotId)).all().map(toStock)

  const orders = (tenant: V.Tenant, options?: V.OrderQuery): V.Page<V.Order> => {
    const limit = limitOf(options)
    const o = T.orders
    const rows = orm.select().from(o).where(and(
      ofTenant(o, tenant),
      options?.includeDeleted === true ? undefined : eq(o.deleted, 0),
      options?.after === undefined ? undefined : gt(o.id, options.after),
      options?.status === undefined ? undefined : eq(o.status, options.status),
      options?.appOrderId === undefined ? undefined : eq(o.appOrderId, options.appOrderId),
      options?.customerMobile === undefined ? undefined : eq(o.customerMobile, options.customerMobile),
      options?.updatedFromMs === undefined ? undefined : gte(o.updatedAtMs, options.updatedFromMs),
      options?.updatedToMs === undefined ? undefined : lte(o.updatedAtMs, options.updatedToMs)
    )).orderBy(asc(o.id)).limit(limit).all()
    return page(rows.map(toOrder), limit)
  }

  const order = (tenant: V.Tenant, id: string): V.Order | undefined => {
    const row = orm.select().from(T.orders).where(and(ofTenant(T.orders, tenant), eq(T.orders.id, id))).get()
    return row === undefined ? undefined : toOrder(row)
  }

  const payments = (tenant: V.Tenant, options?: V.PaymentQuery): V.Page<V.Payment> => {
    const limit = limitOf(options)
    const p = T.payments
    const rows = orm.select().from(p).where(and(
      ofTenant(p, tenant),
      options?.after === undefined ? undefined : gt(p.id, options.after),
      options?.orderId === undefined ? undefined : eq(p.orderId, options.orderId),
      options?.invoiceId === undefined ? undefined : eq(p.invoiceId, options.invoiceId)
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

  const syncState = (tenant: V.Tenant): ReadonlyArray<V.SyncState> =>
    orm.select().from(T.syncState).where(ofTenant(T.syncState, tenant)).orderBy(asc(T.syncState.resource)).all()

  const setSyncState = (tenant: V.Tenant, resource: string, patch: V.SyncStatePatch, now: number): V.SyncState => {
    const s = T.syncState
    const current = orm.select().from(s).where(and(ofTenant(s, tenant), eq(s.resource, resource))).get()
    const pick = <K extends keyof V.SyncStatePatch & keyof V.SyncState>(k: K, fallback: V.SyncState[K]) =>
      (patch[k] === undefined ? current?.[k] ?? fallback : patch[k]) as V.SyncState[K]
    const row: V.SyncState = {
      appId: tenant.appId,
      businessId: tenant.businessId,
      resource,
      cursor: pick("cursor", null),
      lastFullSyncAt: pick("lastFullSyncAt", null),
      lastIncrementalBound: pick("lastIncrementalBound", null),
      status: pick("status", "idle"),
      attentionReason: pick("attentionReason", null),
      updatedAt: now
    }
    orm.insert(s).values(row).onConflictDoUpdate({ target: [s.appId, s.businessId, s.resource], set: row }).run()
    return row
  }

  const countOf = (table: typeof T.products | typeof T.orders | typeof T.inventory | typeof T.payments | typeof T.documents | typeof T.unknownEvents, tenant: V.Tenant, extra?: SQL) =>
    orm.select({ n: count() }).from(table).where(and(ofTenant(table, tenant), extra)).get()?.n ?? 0

  const counts = (tenant: V.Tenant): V.Counts => ({
    products: countOf(T.products, tenant, eq(T.products.deleted, 0)),
    deletedProducts: countOf(T.products, tenant, eq(T.products.deleted, 1)),
    inventory: countOf(T.inventory, tenant),
    orders: countOf(T.orders, tenant, eq(T.orders.deleted, 0)),
    deletedOrders: countOf(T.orders, tenant, eq(T.orders.deleted, 1)),
    payments: countOf(T.payments, tenant),
    documents: countOf(T.documents, tenant),
    unknownEvents: countOf(T.unknownEvents, tenant)
  })

  return {
    products, product, inventory, orders, order, payments, documents, document, webhooks, unknownEvents,
    syncState, setSyncState, counts
  }
}
