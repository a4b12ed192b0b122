/** Customers, depots, categories, brands and stock levels: synchronous drizzle queries. */
import { and, asc, eq, gt } from "drizzle-orm"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import * as T from "../Tables.ts"
import type * as V from "../Views.ts"
import { contains, limitOf, ofTenant, page, when, withRecord } from "./queryKit.ts"

export const make = (orm: BetterSQLite3Database) => {
  const customers = (tenant: V.Tenant, options?: V.CustomerQuery): V.Page<V.Customer> => {
    const limit = limitOf(options)
    const c = T.customers
    const rows = orm.select().from(c).where(and(
      ofTenant(c, tenant),
      when(options?.after, (v) => gt(c.id, v)),
      when(options?.mobile, (v) => eq(c.mobile, v)),
      contains(options?.search, [c.name, c.code, c.mobile, c.email])
    )).orderBy(asc(c.id)).limit(limit).all()
    return page(rows.map(withRecord), limit)
  }

  const customer = (tenant: V.Tenant, id: string): V.Customer | undefined => {
    const row = orm.select().from(T.customers).where(and(ofTenant(T.customers, tenant), eq(T.customers.id, id))).get()
    return row === undefined ? undefined : withRecord(row)
  }

  // A business has tens of depots and a few hundred categories or brands: whole lists.
  const depots = (tenant: V.Tenant): ReadonlyArray<V.Depot> =>
    orm.select().from(T.depots).where(ofTenant(T.depots, tenant)).orderBy(asc(T.depots.id)).all().map(withRecord)

  const categories = (tenant: V.Tenant): ReadonlyArray<V.Category> =>
    orm.select().from(T.categories).where(ofTenant(T.categories, tenant)).orderBy(asc(T.categories.id)).all().map(withRecord)

  const brands = (tenant: V.Tenant): ReadonlyArray<V.Brand> =>
    orm.select().from(T.brands).where(ofTenant(T.brands, tenant)).orderBy(asc(T.brands.id)).all().map(withRecord)

  const inventory = (tenant: V.Tenant, options?: V.InventoryQuery): ReadonlyArray<V.StockLevel> => {
    const i = T.inventory
    return orm.select().from(i).where(and(
      ofTenant(i, tenant),
      when(options?.productId, (v) => eq(i.productId, v)),
      when(options?.depotId, (v) => eq(i.depotId, v))
    )).orderBy(asc(i.productId), asc(i.depotId)).all().map(withRecord)
  }

  return { customers, customer, depots, categories, brands, inventory }
}
