/** Customers, depots, categories, brands and stock levels: synchronous drizzle queries. */
import { and, asc, eq, gt } from "drizzle-orm"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import * as T from "../Tables.ts"
import type * as V from "../Views.ts"
import { contains, limitOf, ofTenant, page, when, withRecord } from "./queryKit.ts"

/** A row with its record parsed and its tombstone flag as a boolean (docs/architecture.md §4.14). */
const view = <R extends { readonly record: string; readonly deleted: number }>(row: R) => ({ ...withRecord(row), deleted: row.deleted === 1 })

export const make = (orm: BetterSQLite3Database) => {
  const customers = (tenant: V.Tenant, options?: V.CustomerQuery): V.Page<V.Customer> => {
    const limit = limitOf(options)
    const c = T.customers
    const rows = orm.select().from(c).where(and(
      ofTenant(c, tenant),
      options?.includeDeleted === true ? undefined : eq(c.deleted, 0),
      when(options?.after, (v) => gt(c.id, v)),
      when(options?.mobile, (v) => eq(c.mobile, v)),
      contains(options?.search, [c.name, c.code, c.mobile, c.email])
    )).orderBy(asc(c.id)).limit(limit).all()
    return page(rows.map(view), limit)
  }

  const customer = (tenant: V.Tenant, id: string): V.Customer | undefined => {
    const row = orm.select().from(T.customers).where(and(ofTenant(T.customers, tenant), eq(T.customers.id, id))).get()
    return row === undefined ? undefined : view(row)
  }

  // A business has tens of depots and a few hundred categories or brands: whole lists, without
  // the tombstones of those the service no longer serves.
  const depots = (tenant: V.Tenant): ReadonlyArray<V.Depot> =>
    orm.select().from(T.depots).where(and(ofTenant(T.depots, tenant), eq(T.depots.deleted, 0))).orderBy(asc(T.depots.id)).all().map(view)

  const categories = (tenant: V.Tenant): ReadonlyArray<V.Category> =>
    orm.select().from(T.categories).where(and(ofTenant(T.categories, tenant), eq(T.categories.deleted, 0))).orderBy(asc(T.categories.id)).all().map(view)

  const brands = (tenant: V.Tenant): ReadonlyArray<V.Brand> =>
    orm.select().from(T.brands).where(and(ofTenant(T.brands, tenant), eq(T.brands.deleted, 0))).orderBy(asc(T.brands.id)).all().map(view)

  const inventory = (tenant: V.Tenant, options?: V.InventoryQuery): ReadonlyArray<V.StockLevel> => {
    const i = T.inventory
    return orm.select().from(i).where(and(
      ofTenant(i, tenant),
      eq(i.deleted, 0),
      when(options?.productId, (v) => eq(i.productId, v)),
      when(options?.depotId, (v) => eq(i.depotId, v))
    )).orderBy(asc(i.productId), asc(i.depotId)).all().map(view)
  }

  return { customers, customer, depots, categories, brands, inventory }
}
