/** Depots: business/depot pages and the deletions a complete full pass finds (docs/api-catalogue.md §7). */
import { Records } from "@ocs/protocol"
import { and, asc, eq } from "drizzle-orm"
import { primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { ofTenant } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { bookkeepingColumns, define, deletedColumn, entityTable, type EventOf, held, row, stringify, tenantColumns, textOf, upsert } from "./Projection.ts"
import { tombstone, tombstoneView } from "./tree.ts"
import { unknown } from "./unknownEvents.ts"

export const table = sqliteTable("depots", {
  ...tenantColumns,
  id: text("id").notNull(),
  code: text("code"),
  name: text("name"),
  mobile: text("mobile"),
  /** `location.address`, else `locationV2.address`. */
  address: text("address"),
  record: text("record").notNull(),
  /** 1: tombstone: the entity is gone from the service (a complete full pass did not serve it,
   *  docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: deletedColumn(),
  ...bookkeepingColumns
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.id] })])

const spec = entityTable("depots", ["code", "name", "mobile", "address", "record", "deleted"], false)
const write = upsert(spec)

const depot = (plan: Plan, record: ProjectableRecord, event: EventOf<"DepotObserved">, index: number): void => {
  const d = event.depot
  const depotId = Records.recordId(d)
  if (depotId === undefined) return unknown(plan, record, event, record.type, "DepotObserved: depot without id", d)
  row(plan, write, [
    event.appId, event.businessId, depotId,
    textOf(d.code), textOf(d.name), textOf(d.mobile),
    // `locationV2` (2-level address, added 2026-05-30) when the 3-level one has none.
    textOf(d.location?.address) ?? textOf(Records.valueAt(d, "locationV2.address")),
    stringify(d), 0,
    ...held(event, record, index)
  ])
}

export const depots = define({
  tables: [spec],
  statements: [write],
  apply: {
    DepotObserved: depot,
    DepotDeleted: (plan, record, event, index) => tombstone(plan, write, record, event, event.depotId, 4, index)
  },
  pass: { kind: "depot", idColumn: "id", windowed: false, observed: { DepotObserved: (event) => Records.recordId(event.depot) } },
  counts: { live: "depots", tombstones: true },
  queries: (orm) => ({
    /** Every live depot, by id (a business has tens). */
    depots: (tenant: V.Tenant): ReadonlyArray<V.Depot> =>
      orm.select().from(table).where(and(ofTenant(table, tenant), eq(table.deleted, 0))).orderBy(asc(table.id)).all().map(tombstoneView)
  })
})
