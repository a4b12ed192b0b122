/**
 * Id maps (docs/architecture.md §4.31): the tenant's own keys and the service's ids,
 * `appProductId <-> id` and `appOrderId <-> id`, from the copy (webhooks and pulls carry both).
 * Each direction is an index lookup: by key (`products_tenant_app_product_id`,
 * `orders_tenant_app_order_id`) or by the primary key. An order/add refused as a duplicate
 * finds the existing order here, with no page scan of the service.
 */
import type { SqliteDatabase } from "@ocs/sqlite"
import type * as V from "../Views.ts"
import { limitOf } from "./queryKit.ts"

const tables = {
  product: { table: "products", key: "app_product_id" },
  order: { table: "orders", key: "app_order_id" }
} as const

interface Row {
  readonly id: string
  readonly key: string
  readonly deleted: number
}

const MAX_LISTED = 1000

export const make = (client: SqliteDatabase.Handle["client"]) => {
  const statements = (t: (typeof tables)[V.IdMapEntity]) => {
    const select = `SELECT id, ${t.key} AS key, deleted FROM ${t.table} WHERE app_id = ? AND business_id = ? AND ${t.key} IS NOT NULL`
    return {
      page: client.prepare<[string, string, string, number], Row>(`${select} AND id > ? ORDER BY id LIMIT ?`),
      // A JSON array of values: one prepared statement whatever their number, the index still used.
      byKeys: client.prepare<[string, string, string], Row>(`${select} AND ${t.key} IN (SELECT value FROM json_each(?)) ORDER BY id`),
      byIds: client.prepare<[string, string, string], Row>(`${select} AND id IN (SELECT value FROM json_each(?)) ORDER BY id`)
    }
  }
  const prepared = { product: statements(tables.product), order: statements(tables.order) }

  const view = (r: Row): V.IdMapping => ({ id: r.id, key: r.key, deleted: r.deleted === 1 })

  return (tenant: V.Tenant, entity: V.IdMapEntity, query?: V.IdMapQuery): V.Page<V.IdMapping> => {
    const p = prepared[entity]
    const keys = query?.keys?.slice(0, MAX_LISTED) ?? []
    const ids = query?.ids?.slice(0, MAX_LISTED) ?? []
    if (keys.length > 0 || ids.length > 0) {
      const rows = [
        ...(keys.length > 0 ? p.byKeys.all(tenant.appId, tenant.businessId, JSON.stringify(keys)) : []),
        ...(ids.length > 0 ? p.byIds.all(tenant.appId, tenant.businessId, JSON.stringify(ids)) : [])
      ]
      const seen = new Set<string>()
      return { items: rows.filter((r) => !seen.has(r.id) && seen.add(r.id)).map(view), next: undefined }
    }
    const limit = limitOf(query)
    const rows = p.page.all(tenant.appId, tenant.businessId, query?.after ?? "", limit)
    return { items: rows.map(view), next: rows.length === limit ? rows[rows.length - 1]!.id : undefined }
  }
}
