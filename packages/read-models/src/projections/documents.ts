/**
 * Documents: every catalogued read without a typed model (invoices, warranty slips, ...), one
 * row per kind and id. order/deleted and bill/deleted documents also give the order's or the
 * bill's tombstone (docs/api-catalogue.md §3.3, §5.3).
 */
import { and, asc, eq, gt } from "drizzle-orm"
import { primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { limitOf, ofTenant, page, parse } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { billDeleted } from "./bills.ts"
import { orderDeleted } from "./orders.ts"
import * as PageService from "./pageService.ts"
import { bookkeepingColumns, define, type EventOf, held, row, stringify, type TableSpec, tenantColumns, textOf, toMillis, upsert, versionColumns } from "./Projection.ts"

/** Resources without a typed model (invoices, warranty slips, ...), from sync pages. */
export const table = sqliteTable("documents", {
  ...tenantColumns,
  kind: text("kind").notNull(),
  /** The id under the operation's idField; `event:<domain event id>` when absent. */
  id: text("id").notNull(),
  body: text("body").notNull(),
  ...versionColumns,
  ...bookkeepingColumns
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.kind, t.id] })])

const spec: TableSpec = { name: "documents", key: ["app_id", "business_id", "kind", "id"], content: ["body", "updated_at", "updated_at_ms"], versioned: true, rank: 0 }
const write = upsert(spec)

/** Kinds of documents that are deletions of a typed entity (docs/api-catalogue.md §3.3, §5.3). */
const deletionKinds: Readonly<Record<string, "order" | "bill">> = { "order.deleted": "order", "bill.deleted": "bill" }

const document = (plan: Plan, record: ProjectableRecord, event: EventOf<"DocumentObserved">, index: number): void => {
  // The page service's kinds have typed tables (./pageService.ts).
  if (PageService.applyDocument(plan, record, event, index)) return
  row(plan, write, [
    event.appId, event.businessId, event.kind, event.documentId ?? `event:${event.id}`,
    stringify(event.document), textOf(event.updatedAt), toMillis(event.updatedAt),
    ...held(event, record, index)
  ])
  // order/deleted and bill/deleted list deleted ids with the deletion time (`createdAt`): the
  // entity gets its tombstone too, so a full pull catches deletions a lost webhook missed.
  const deleted = deletionKinds[event.kind]
  if (deleted === undefined || event.documentId === undefined) return
  if (deleted === "order") orderDeleted(plan, record, event, event.documentId, event.document, event.document["createdAt"], index)
  else billDeleted(plan, record, event, event.documentId, event.document, index)
}

const toDocument = (r: typeof table.$inferSelect): V.Document => ({ ...r, body: parse(r.body) })

export const documents = define({
  tables: [spec],
  statements: [write],
  apply: { DocumentObserved: document },
  counts: { live: "documents", tombstones: false },
  queries: (orm) => ({
    documents: (tenant: V.Tenant, kind: string, options?: V.PageOptions): V.Page<V.Document> => {
      const limit = limitOf(options)
      const d = table
      const rows = orm.select().from(d).where(and(
        ofTenant(d, tenant),
        eq(d.kind, kind),
        options?.after === undefined ? undefined : gt(d.id, options.after)
      )).orderBy(asc(d.id)).limit(limit).all()
      return page(rows.map(toDocument), limit)
    },
    document: (tenant: V.Tenant, kind: string, documentId: string): V.Document | undefined => {
      const d = table
      const found = orm.select().from(d).where(and(ofTenant(d, tenant), eq(d.kind, kind), eq(d.id, documentId))).get()
      return found === undefined ? undefined : toDocument(found)
    }
  })
})
