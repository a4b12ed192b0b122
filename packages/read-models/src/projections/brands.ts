/** Brands: product/brand pages and the deletions a complete full pass finds; a product tree like categories (docs/api-catalogue.md §2.4). */
import { Records } from "@ocs/protocol"
import { and, asc, eq } from "drizzle-orm"
import { ofTenant } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { node, treeSpec } from "./categories.ts"
import { define, upsert } from "./Projection.ts"
import { tombstone, tombstoneView, treeTable } from "./tree.ts"

export const table = treeTable("brands")

const spec = treeSpec("brands")
const write = upsert(spec)

export const brands = define({
  tables: [spec],
  statements: [write],
  apply: {
    BrandObserved: (plan, record, event, index) => node(plan, write, record, event, event.brand, "brand", index),
    BrandDeleted: (plan, record, event, index) => tombstone(plan, write, record, event, event.brandId, 4, index)
  },
  pass: { kind: "brand", idColumn: "id", windowed: false, observed: { BrandObserved: (event) => Records.recordId(event.brand) } },
  counts: { live: "brands", tombstones: true },
  queries: (orm) => ({
    /** Every live brand, by id. */
    brands: (tenant: V.Tenant): ReadonlyArray<V.Brand> =>
      orm.select().from(table).where(and(ofTenant(table, tenant), eq(table.deleted, 0))).orderBy(asc(table.id)).all().map(tombstoneView)
  })
})
