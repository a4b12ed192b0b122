/** Orders and bills, each with its lines: synchronous drizzle queries (wrapped by ReadModels.ts). */
import { and, asc, eq, gt, gte, lte } from "drizzle-orm"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import * as T from "../Tables.ts"
import type * as V from "../Views.ts"
import { limitOf, ofTenant, page, when, withRecord } from "./queryKit.ts"

const toOrder = (row: typeof T.orders.$inferSelect): V.Order => ({ ...withRecord(row), deleted: row.deleted === 1 })
const toBill = (row: typeof T.bills.$inferSelect): V.Bill => ({ ...withRecord(row), deleted: row.deleted === 1 })

export const make = (orm: BetterSQLite3Database) => {
  const orders = (tenant: V.Tenant, options?: V.OrderQuery): V.Page<V.Order> => {
    const limit = limitOf(options)
    const o = T.orders
    const rows = orm.select().from(o).where(and(
      ofTenant(o, tenant),
      options?.includeDeleted === true ? undefined : eq(o.deleted, 0),
      when(options?.after, (v) => gt(o.id, v)),
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
  }

  const order = (tenant: V.Tenant, id: string): V.OrderDetail | undefined => {
    const row = orm.select().from(T.orders).where(and(ofTenant(T.orders, tenant), eq(T.orders.id, id))).get()
    if (row === undefined) return undefined
    const i = T.orderItems
    const items = orm.select().from(i).where(and(ofTenant(i, tenant), eq(i.orderId, id))).orderBy(asc(i.line)).all()
    return { ...toOrder(row), items: items.map(withRecord) }
  }

  const bills = (tenant: V.Tenant, options?: V.BillQuery): V.Page<V.Bill> => {
    const limit = limitOf(options)
    const b = T.bills
    const rows = orm.select().from(b).where(and(
      ofTenant(b, tenant),
      options?.includeDeleted === true ? undefined : eq(b.deleted, 0),
      when(options?.after, (v) => gt(b.id, v)),
      when(options?.type, (v) => eq(b.type, v)),
      when(options?.depotId, (v) => eq(b.depotId, v)),
      when(options?.customerId, (v) => eq(b.customerId, v)),
      // yyyy-mm-dd compares as text in date order.
      when(options?.fromDate, (v) => gte(b.date, v)),
      when(options?.toDate, (v) => lte(b.date, v))
    )).orderBy(asc(b.id)).limit(limit).all()
    return page(rows.map(toBill), limit)
  }

  const bill = (tenant: V.Tenant, id: string): V.BillDetail | undefined => {
    const row = orm.select().from(T.bills).where(and(ofTenant(T.bills, tenant), eq(T.bills.id, id))).get()
    if (row === undefined) return undefined
    const i = T.billItems
    const items = orm.select().from(i).where(and(ofTenant(i, tenant), eq(i.billId, id))).orderBy(asc(i.line)).all()
    return { ...toBill(row), items: items.map(withRecord) }
  }

  return { orders, order, bills, bill }
}
