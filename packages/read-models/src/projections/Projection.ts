/**
 * What a projection is, as data: one entity's table(s), the statements that write them (the
 * conflict rule in SQL), how each domain event it handles becomes rows (pure: statement
 * parameters appended to a plan), what change detection compares, and its read queries.
 * One module per entity (./products.ts, ./orders.ts, ...); ./index.ts gathers them for the
 * planner, the rebuild's planner thread, change detection, digests and the read API.
 *
 * Rows are planned as statement numbers plus parameter lists of primitives, so a plan made on
 * the planner thread posts cheaply; the registry numbers every statement once at load.
 */
import { type DomainEvent, Json, Records } from "@ocs/protocol"
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { integer, type SQLiteColumnBuilderBase, text as textColumn } from "drizzle-orm/sqlite-core"
import type { Param, Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { asText, toMillis } from "../UpdatedAt.ts"
import type * as V from "../Views.ts"

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

/**
 * What a statement is, for a store that writes another dialect (../postgres/Statements.ts): an
 * upsert under the conflict rule, or a line cleared or written when its parent holds the event. Other
 * statements are translated from their SQL.
 */
export type StatementShape =
  | { readonly kind: "upsert"; readonly table: TableSpec }
  | { readonly kind: "line"; readonly table: TableSpec; readonly parent: string }
  | { readonly kind: "clear"; readonly table: TableSpec; readonly parent: string }

/** One prepared statement of the projector. `id`: its place in the registry's list (./index.ts). */
export class Statement {
  readonly name: string
  readonly sql: string
  readonly shape: StatementShape | undefined
  id = -1
  constructor(name: string, sql: string, shape?: StatementShape) {
    this.name = name
    this.sql = sql
    this.shape = shape
  }
}

export const BOOKKEEPING = ["last_event_id", "last_offset", "last_index", "last_source", "last_received_at"] as const

/** A column name quoted (`group` is an SQL keyword). */
export const quote = (column: string) => `"${column}"`

/**
 * The conflict rule, in SQL: the incoming row (`excluded`) wins when both carry a parsed
 * updatedAt and they differ and it is newer; otherwise (equal, or absent on either side) when it
 * comes later in the log (offset, then index inside the record). Tables without an updated
 * time use the log position alone.
 */
const newer = (table: string, versioned: boolean) => {
  const position = `(excluded.last_offset, excluded.last_index) > (${table}.last_offset, ${table}.last_index)`
  if (!versioned) return position
  return `CASE WHEN excluded.updated_at_ms IS NOT NULL AND ${table}.updated_at_ms IS NOT NULL
    AND excluded.updated_at_ms <> ${table}.updated_at_ms
    THEN excluded.updated_at_ms > ${table}.updated_at_ms ELSE ${position} END`
}

/** A projected table: its key and content columns, in the order its statements bind them. */
export interface TableSpec {
  readonly name: string
  readonly key: ReadonlyArray<string>
  readonly content: ReadonlyArray<string>
  /** Carries updated_at(_ms): the conflict rule compares them before the log position. */
  readonly versioned?: boolean | undefined
  /** Digest order: entity tables, then line tables, then the audit table. */
  readonly rank: 0 | 1 | 2
}

/** The upsert of an entity row under the conflict rule. Binds: key, content, bookkeeping. */
export const upsert = (table: TableSpec): Statement => {
  const columns = [...table.key, ...table.content, ...BOOKKEEPING]
  const set = [...table.content, ...BOOKKEEPING].map((c) => `${quote(c)} = excluded.${quote(c)}`).join(", ")
  return new Statement(`${table.name}.upsert`, `INSERT INTO ${table.name} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
    ON CONFLICT (${table.key.join(", ")}) DO UPDATE SET ${set} WHERE ${newer(table.name, table.versioned === true)}`, { kind: "upsert", table })
}

/** The conflict rule's condition for `table` (`excluded`: the incoming row), for other dialects. */
export const newerThan = (table: TableSpec): string => newer(table.name, table.versioned === true)

/** The condition that `parent` holds the event (binds tenant, parent id, event id), for other dialects. */
export const parentHolds = (parent: string): string => heldBy(parent)

/**
 * The parent row holds this event's version exactly when its `last_event_id` is the event's id:
 * event ids are unique, and an event that lost the conflict rule left the row untouched. So the
 * lines follow the winning version whatever order the versions arrive in.
 */
const heldBy = (parent: string) =>
  `EXISTS (SELECT 1 FROM ${parent} p WHERE p.app_id = ? AND p.business_id = ? AND p.id = ? AND p.last_event_id = ?)`

/**
 * Lines of a parent row (order and bill lines): cleared, then written, only when the parent row
 * holds the event's version. Clear binds: tenant, parent id, then tenant, parent id, event id;
 * a line binds the row, then tenant, parent id, event id.
 */
export const lines = (table: TableSpec, parent: string) => {
  const cols = [...table.key, ...table.content]
  return {
    clear: new Statement(`${table.name}.clear`, `DELETE FROM ${table.name} WHERE app_id = ? AND business_id = ? AND ${table.key[2]} = ? AND ${heldBy(parent)}`, { kind: "clear", table, parent }),
    line: new Statement(`${table.name}.line`, `INSERT OR REPLACE INTO ${table.name} (${cols.map(quote).join(", ")}) SELECT ${cols.map(() => "?").join(", ")} WHERE ${heldBy(parent)}`, { kind: "line", table, parent })
  }
}

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

/** What every row takes from its event. */
export interface EventFacts {
  readonly id: string
  readonly appId: string
  readonly businessId: string | null
  readonly source: string
  readonly receivedAt: number
}

export const row = (plan: Plan, statement: Statement, params: ReadonlyArray<Param>): void => {
  plan.ops.push(statement.id)
  plan.params.push(params)
}

/** The bookkeeping columns: which observation the row holds. */
export const held = (event: EventFacts, record: ProjectableRecord, index: number): ReadonlyArray<Param> =>
  [event.id, record.offset, index, event.source, event.receivedAt]

// Decoded records hold bigints for big ids: serialise them the way made for parsed values.
export const stringify = Json.stringifyParsed

/** A value as text: strings as-is, any other JSON value (a number code, a bigint) as its JSON text. */
export const textOf = (value: unknown): string | null => asText(value, stringify)

/** A finite number, or null; a bigint is rounded here and kept exact by its `_text` column. */
export const amount = (value: unknown): number | null => Records.toNumber(value) ?? null

/** An amount as sent, as text: a numeric string as-is, a number or bigint digit for digit. */
export const amountText = (value: unknown): string | null =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "bigint" ? stringify(value) : null

export const id = (record: unknown, path: string): string | null => Records.recordId(record, path) ?? null

export { toMillis }

/**
 * What a tombstone keeps of a deletion: the data of the delivery (the ids it names), never the
 * whole webhook body, which carries the verify token.
 */
export const deletion = (data: unknown): unknown =>
  typeof data === "object" && data !== null && !Array.isArray(data) && "event" in data ? (data as Record<string, unknown>)["data"] ?? null : data

/** A tombstone's updatedAt: the delete's own, else when it was received (so a stale page cannot resurrect). */
export const deletedAt = (event: EventFacts, updatedAt: unknown): number => toMillis(updatedAt) ?? event.receivedAt

// ---------------------------------------------------------------------------------------------
// The shape
// ---------------------------------------------------------------------------------------------

export type Tag = DomainEvent.DomainEvent["_tag"]
export type EventOf<K extends Tag> = Extract<DomainEvent.DomainEvent, { readonly _tag: K }>

/** How one domain event becomes rows: appended to `plan` (`index`: the event's place in its record). */
export type Apply<K extends Tag> = (plan: Plan, record: ProjectableRecord, event: EventOf<K>, index: number) => void

export type Handlers<K extends Tag> = { readonly [P in K]: Apply<P> }

/** Change detection (docs/architecture.md §4.14): what a completed full pass compares. */
export interface PassSpec {
  readonly kind: DomainEvent.DeletableKind
  /** The column naming the entity (stock: the product). */
  readonly idColumn: string
  /** Windowed reads (orders, bills) cover their horizon only (`created_at_ms`). */
  readonly windowed: boolean
  /** The id a pull's observation of this entity names, per event tag. */
  readonly observed: { readonly [P in Tag]?: (event: EventOf<P>) => string | undefined }
}

/** What `counts` and `rowCounts` report for the entity's table. */
export interface CountSpec {
  readonly live: keyof V.Counts
  readonly deleted?: keyof V.Counts | undefined
  /** The table has tombstones (`deleted`): live rows are those with `deleted = 0`. */
  readonly tombstones: boolean
}

export type Queries = Readonly<Record<string, (...args: Array<never>) => unknown>>

export interface Projection<K extends Tag = Tag, Q extends Queries = Queries> {
  /** The entity's table (`rowCounts` key), then its line tables. */
  readonly tables: ReadonlyArray<TableSpec>
  readonly statements: ReadonlyArray<Statement>
  readonly apply: Handlers<K>
  readonly pass?: PassSpec | undefined
  readonly counts?: CountSpec | undefined
  /** Its read queries, synchronous (ReadApi.ts runs them on the connection). */
  readonly queries: (orm: BetterSQLite3Database) => Q
}

/** Any projection, as the registry lists them (its rules are reached through the registry's typed table). */
export type AnyProjection = Projection<never>

/** Keeps a module's exact types (the registry checks that every event tag has its rule). */
export const define = <const K extends Tag, Q extends Queries>(projection: Projection<K, Q>): Projection<K, Q> => projection

/** A table spec of an entity keyed by its id (`app_id, business_id, id`). */
export const entityTable = (name: string, content: ReadonlyArray<string>, versioned: boolean): TableSpec =>
  ({ name, key: ["app_id", "business_id", "id"], content, versioned, rank: 0 })

// ---------------------------------------------------------------------------------------------
// drizzle columns every table shares (the schema of src/Tables.ts)
// ---------------------------------------------------------------------------------------------

export const tenantColumns = {
  appId: textColumn("app_id").notNull(),
  businessId: textColumn("business_id").notNull()
}

/** Which observation the row holds (excluded from digests). */
export const bookkeepingColumns = {
  lastEventId: textColumn("last_event_id").notNull(),
  lastOffset: integer("last_offset").notNull(),
  lastIndex: integer("last_index").notNull(),
  lastSource: textColumn("last_source").notNull(),
  lastReceivedAt: integer("last_received_at").notNull()
}

/** `updated_at`: the value as received (strings as-is, other JSON as text); `_ms`: parsed. */
export const versionColumns = {
  updatedAt: textColumn("updated_at"),
  updatedAtMs: integer("updated_at_ms")
}

/** `created_at`: as received; `_ms`: parsed (queries filter on it). */
export const createdColumns = {
  createdAt: textColumn("created_at"),
  createdAtMs: integer("created_at_ms")
}

/** 1: tombstone: the entity is gone from the service; content columns are null, `record` holds why. */
export const deletedColumn = () => integer("deleted").notNull().default(0)

/**
 * The columns of an entity table keyed by its id, versioned and with tombstones (products,
 * orders, customers): the key, the entity's own `content` columns, then the record as received,
 * its version, the tombstone flag and the bookkeeping.
 */
export const entityColumns = <C extends Record<string, SQLiteColumnBuilderBase>>(content: C) => ({
  ...tenantColumns,
  id: textColumn("id").notNull(),
  ...content,
  /** The whole record, lossless JSON (`Json.stringify`); unknown fields kept. */
  record: textColumn("record").notNull(),
  ...versionColumns,
  /** 1: tombstone: the entity is gone (a delete webhook, or a complete full pass no longer served
   *  it, docs/architecture.md §4.14); content columns are null, `record` holds why. */
  deleted: deletedColumn(),
  ...bookkeepingColumns
})
