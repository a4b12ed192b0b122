/**
 * Unknown events: what the decoder (or a projection) could not give meaning to, kept for audit
 * (an UnknownEvent, or a fact without the id its table is keyed by).
 */
import { and, asc, gt } from "drizzle-orm"
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { limitOf, ofTenant, page } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { define, type EventFacts, row, Statement, stringify, type TableSpec, tenantColumns } from "./Projection.ts"

export const table = sqliteTable("unknown_events", {
  ...tenantColumns,
  eventId: text("event_id").notNull(),
  recordId: text("record_id").notNull(),
  offset: integer("offset").notNull(),
  source: text("source").notNull(),
  type: text("type").notNull(),
  reason: text("reason").notNull(),
  /** Lossless JSON of what could not be used (null when there was nothing). */
  data: text("data"),
  receivedAt: integer("received_at").notNull()
}, (t) => [primaryKey({ columns: [t.appId, t.businessId, t.eventId] })])

const spec: TableSpec = { name: "unknown_events", key: ["app_id", "business_id", "event_id"], content: ["record_id", "source", "type", "reason", "data"], rank: 2 }

const insert = new Statement("unknown_events.insert", `INSERT OR IGNORE INTO unknown_events
    (app_id, business_id, event_id, record_id, offset, source, type, reason, data, received_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)

/** Keeps what could not be projected (`reason` says why). */
export const unknown = (plan: Plan, record: ProjectableRecord, event: EventFacts, type: string, reason: string, data: unknown): void =>
  row(plan, insert, [
    event.appId, event.businessId ?? "", event.id, record.id, record.offset, event.source, type, reason,
    data === undefined ? null : stringify(data), event.receivedAt
  ])

export const unknownEvents = define({
  tables: [spec],
  statements: [insert],
  apply: {
    UnknownEvent: (plan, record, event) => unknown(plan, record, event, event.type, event.reason, event.data)
  },
  counts: { live: "unknownEvents", tombstones: false },
  queries: (orm) => ({
    unknownEvents: (tenant: V.Tenant, options?: V.PageOptions): V.Page<V.UnknownEvent & { readonly id: string }> => {
      const limit = limitOf(options)
      const u = table
      const rows = orm.select().from(u).where(and(
        ofTenant(u, tenant),
        options?.after === undefined ? undefined : gt(u.eventId, options.after)
      )).orderBy(asc(u.eventId)).limit(limit).all()
      return page(rows.map((r) => ({ ...r, id: r.eventId })), limit)
    }
  })
})
