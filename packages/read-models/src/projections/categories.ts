/** Product categories: product/category pages and the deletions a complete full pass finds (docs/api-catalogue.md §2.3). */
import { Records } from "@ocs/protocol"
import { and, asc, eq } from "drizzle-orm"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { ofTenant } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { define, entityTable, type EventFacts, held, id, row, type Statement, stringify, textOf, upsert } from "./Projection.ts"
import { tombstone, tombstoneView, treeTable } from "./tree.ts"
import { unknown } from "./unknownEvents.ts"

export const table = treeTable("categories")

/** The table spec of a product tree (categories, brands): no updated time, the log position decides. */
export const treeSpec = (name: string) => entityTable(name, ["parent_id", "code", "name", "status", "record", "deleted"], false)

const spec = treeSpec("categories")
const write = upsert(spec)

/** One node of a product tree (`what` names it in an unknown event's reason). */
export const node = (plan: Plan, statement: Statement, record: ProjectableRecord, event: EventFacts & { readonly _tag: string; readonly businessId: string }, c: Records.Category, what: string, index: number): void => {
  const nodeId = Records.recordId(c)
  if (nodeId === undefined) return unknown(plan, record, event, record.type, `${event._tag}: ${what} without id`, c)
  row(plan, statement, [
    event.appId, event.businessId, nodeId,
    id(c, "parentId"), textOf(c.code), textOf(c.name), textOf(c.status), stringify(c), 0,
    ...held(event, record, index)
  ])
}

export const categories = define({
  tables: [spec],
  statements: [write],
  apply: {
    CategoryObserved: (plan, record, event, index) => node(plan, write, record, event, event.category, "category", index),
    CategoryDeleted: (plan, record, event, index) => tombstone(plan, write, record, event, event.categoryId, 4, index)
  },
  pass: { kind: "category", idColumn: "id", windowed: false, observed: { CategoryObserved: (event) => Records.recordId(event.category) } },
  counts: { live: "categories", tombstones: true },
  queries: (orm) => ({
    /** Every live category, by id (a business has a few hundred). */
    categories: (tenant: V.Tenant): ReadonlyArray<V.Category> =>
      orm.select().from(table).where(and(ofTenant(table, tenant), eq(table.deleted, 0))).orderBy(asc(table.id)).all().map(tombstoneView)
  })
})
