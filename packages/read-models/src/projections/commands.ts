/**
 * Commands of the write path (docs/architecture.md §4.31): one row per command, its state
 * machine projected from the transition records of the log (`EngineRecordCommands`). The request
 * inserts the row; every later transition moves its state and keeps what it carries (attempt,
 * the exact answer, the entity's id, the reason, the evidence of a doubt). A rebuild from the
 * log gives the same rows.
 */
import { EngineRecordCommands } from "@ocs/protocol"
import { and, desc, eq, lt } from "drizzle-orm"
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { limitOf, ofTenant, parse, when } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { bookkeepingColumns, BOOKKEEPING, define, type EventOf, held, quote, row, Statement, stringify, type TableSpec, tenantColumns } from "./Projection.ts"

export const table = sqliteTable("commands", {
  ...tenantColumns,
  id: text("id").notNull(),
  kind: text("kind").notNull(),
  /** pending, sending, inDoubt, confirmed, failed, cancelled (`EngineRecordCommands.State`). */
  state: text("state").notNull(),
  idempotencyKey: text("idempotency_key").notNull(),
  /** JSON: `{ type, name? }`. */
  requestedBy: text("requested_by").notNull(),
  /** JSON: the payload as requested. */
  payload: text("payload").notNull(),
  fingerprint: text("fingerprint").notNull(),
  marker: text("marker"),
  attempts: integer("attempts").notNull(),
  /** The service's id of what the command created or changed, once known. */
  entityId: text("entity_id"),
  /** The exact body of the last answer. */
  lastAnswer: text("last_answer"),
  /** JSON: the last failure or doubt's reason `{ tag, code?, message }`. */
  reason: text("reason"),
  /** What the engine saw when it resolved or left a doubt. */
  evidence: text("evidence"),
  requestedAtMs: integer("requested_at_ms").notNull(),
  updatedAtMs: integer("updated_at_ms").notNull(),
  ...bookkeepingColumns
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("commands_tenant_key").on(t.appId, t.businessId, t.idempotencyKey),
  index("commands_tenant_state").on(t.appId, t.businessId, t.state)
])

const CONTENT = [
  "kind", "state", "idempotency_key", "requested_by", "payload", "fingerprint", "marker", "attempts", "entity_id", "last_answer",
  "reason", "evidence", "requested_at_ms", "updated_at_ms"
] as const
const spec: TableSpec = { name: "commands", key: ["app_id", "business_id", "id"], content: CONTENT, versioned: false, rank: 0 }

/** The request: inserts the row once (a request is appended once per idempotency key). */
const insert = new Statement(
  "commands.requested",
  `INSERT INTO commands (${[...spec.key, ...CONTENT, ...BOOKKEEPING].map(quote).join(", ")})
   VALUES (${[...spec.key, ...CONTENT, ...BOOKKEEPING].map(() => "?").join(", ")}) ON CONFLICT DO NOTHING`
)

/**
 * A later transition: the state it moves to, and what it carries over what the row had. The
 * log position guards the order (a transition never moves a row back). Binds: state, attempt,
 * entity id, answer, reason, evidence, updated at, bookkeeping, tenant, id, offset, index.
 */
const transition = new Statement(
  "commands.transition",
  `UPDATE commands SET state = ?, attempts = max(attempts, ?), entity_id = coalesce(?, entity_id),
     last_answer = coalesce(?, last_answer), reason = coalesce(?, reason), evidence = coalesce(?, evidence), updated_at_ms = ?,
     ${BOOKKEEPING.map((c) => `${c} = ?`).join(", ")}
   WHERE app_id = ? AND business_id = ? AND id = ? AND (last_offset, last_index) < (?, ?)`
)

const apply = (plan: Plan, record: ProjectableRecord, event: EventOf<"CommandTransitioned">, index: number): void => {
  const t = event.transition
  const state = EngineRecordCommands.stateAfter(t)
  if (t.state === "requested") {
    row(plan, insert, [
      event.appId, event.businessId, t.command,
      t.kind, state, t.idempotencyKey, JSON.stringify(t.requestedBy), stringify(t.payload), t.fingerprint, t.marker ?? null, 0,
      null, null, null, null, event.receivedAt, event.receivedAt,
      ...held(event, record, index)
    ])
    return
  }
  const attempt = "attempt" in t && t.attempt !== undefined ? t.attempt : 0
  const entityId = "entityId" in t && t.entityId !== undefined ? t.entityId : null
  const answer = t.state === "answered" ? t.body : null
  const reason = "reason" in t ? JSON.stringify(t.reason) : null
  const evidence = "evidence" in t && t.evidence !== undefined ? t.evidence : null
  row(plan, transition, [
    state, attempt, entityId, answer, reason, evidence, event.receivedAt,
    ...held(event, record, index),
    event.appId, event.businessId, t.command, record.offset, index
  ])
}

const view = (r: typeof table.$inferSelect): V.Command => ({
  id: r.id,
  kind: r.kind,
  state: r.state as V.Command["state"],
  idempotencyKey: r.idempotencyKey,
  requestedBy: parse(r.requestedBy) as unknown as V.Command["requestedBy"],
  payload: parse(r.payload),
  fingerprint: r.fingerprint,
  marker: r.marker ?? undefined,
  attempts: r.attempts,
  entityId: r.entityId ?? undefined,
  lastAnswer: r.lastAnswer ?? undefined,
  reason: r.reason === null ? undefined : parse(r.reason) as unknown as V.Command["reason"],
  evidence: r.evidence ?? undefined,
  requestedAt: r.requestedAtMs,
  updatedAt: r.updatedAtMs
})

export const commands = define({
  tables: [spec],
  statements: [insert, transition],
  apply: { CommandTransitioned: apply },
  queries: (orm) => ({
    /** Newest first (ids are UUIDv7, so by request time); `after` is the last id of the previous page. */
    commands: (tenant: V.Tenant, options?: V.CommandQuery): V.Page<V.Command> => {
      const limit = limitOf(options)
      const c = table
      const rows = orm.select().from(c).where(and(
        ofTenant(c, tenant),
        when(options?.after, (v) => lt(c.id, v)),
        when(options?.state, (v) => eq(c.state, v)),
        when(options?.kind, (v) => eq(c.kind, v)),
        when(options?.idempotencyKey, (v) => eq(c.idempotencyKey, v))
      )).orderBy(desc(c.id)).limit(limit).all()
      const items = rows.map(view)
      return { items, next: items.length === limit ? items[items.length - 1]!.id : undefined }
    },
    command: (tenant: V.Tenant, commandId: string): V.Command | undefined => {
      const found = orm.select().from(table).where(and(ofTenant(table, tenant), eq(table.id, commandId))).get()
      return found === undefined ? undefined : view(found)
    }
  })
})
