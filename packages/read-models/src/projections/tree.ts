/**
 * What depots, categories and brands share: small reference lists with no updated time (the
 * log position alone decides), read whole, and tombstones for those a complete full pass no
 * longer found (docs/architecture.md §4.14).
 */
import { primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Param, Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { withRecord } from "../internal/queryKit.ts"
import { bookkeepingColumns, deletedColumn, type EventFacts, held, row, type Statement, stringify, tenantColumns } from "./Projection.ts"

/** A row with its record parsed and its tombstone flag as a boolean (docs/architecture.md §4.14). */
export const tombstoneView = <R extends { readonly record: string; readonly deleted: number }>(r: R) => ({ ...withRecord(r), deleted: r.deleted === 1 })

/** A product tree (categories, brands): the same columns under two names. */
export const treeTable = <N extends string>(name: N) =>
  sqliteTable(name, {
    ...tenantColumns,
    id: text("id").notNull(),
    parentId: text("parent_id"),
    code: text("code"),
    name: text("name"),
    /** 1 active, 2 inactive. */
    status: text("status"),
    record: text("record").notNull(),
    /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
     *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
    deleted: deletedColumn(),
    ...bookkeepingColumns
  }, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.id] })])

/**
 * A tombstone: the key, `nulls` content columns null, the deletion's data as `record`,
 * `deleted = 1`, then the bookkeeping.
 */
export const tombstone = (
  plan: Plan,
  statement: Statement,
  record: ProjectableRecord,
  event: EventFacts & { readonly businessId: string; readonly data: unknown },
  entityId: string,
  nulls: number,
  index: number
): void => {
  const params: Array<Param> = [event.appId, event.businessId, entityId]
  for (let i = 0; i < nulls; i++) params.push(null)
  params.push(stringify(event.data), 1, ...held(event, record, index))
  row(plan, statement, params)
}
