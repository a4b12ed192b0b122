/**
 * The records the engine writes into the log beside what the service sent: the meta of a list
 * page, a completed full pass, the ids a duplicate page still counts as seen, and the changes
 * the read models found (docs/architecture.md §4.14). Each shape is declared once here and
 * every writer and reader goes through it, so a field renamed in one place cannot silently
 * break another.
 *
 * Readers are lenient: a record written by an older engine, or a meta without the field, reads
 * as "absent", never as an exception (the log is history, and history is not re-written).
 */
import { Option, Schema } from "effect"
import { tenantKey } from "./Ids.ts"
import * as Operation from "./Operation.ts"

/** Type of the records the read models append with the changes they found (source "sync"). */
export const CHANGES_TYPE = "ocs:changes"

/** Type of the record a sync appends when a full pass completed (source "sync"). */
export const PASS_TYPE = "ocs:pass"

/**
 * Type of the record a sync appends when a page of a full pass was already in the log (same
 * cursor, same content: the log dropped it as a duplicate), so that the pass still counts its
 * ids as seen. Bookkeeping: it decodes to no domain event.
 */
export const PASS_SEEN_TYPE = "ocs:pass-seen"

/** Whether a record of source "sync" is one of the engine's own rather than a list page. */
export const isEngineType = (type: string): boolean =>
  type === CHANGES_TYPE || type === PASS_TYPE || type === PASS_SEEN_TYPE

// ---------------------------------------------------------------------------------------------
// Page meta: what a sync writes beside each list page so the page decodes on its own.
// ---------------------------------------------------------------------------------------------

/** The entity a page's records are: the operation's own declaration (kind, id field, times). */
export const Entity = Operation.Entity
export type Entity = typeof Entity.Type

/** Meta of one list page (source "sync", type = the operation's key). */
export const PageMeta = Schema.Struct({
  entity: Entity,
  /** "full" or "incremental", as the engine ran the resource. */
  mode: Schema.String,
  /** The window filters of a windowed read: part of the page's identity. */
  range: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  /** The full pass the page belongs to (its ids count towards tombstones). */
  pass: Schema.optionalKey(Schema.String),
  /** A page of the resource's first full sync: it fills the copy and reveals no change. */
  baseline: Schema.optionalKey(Schema.Literal(true)),
  cursor: Schema.NullOr(Schema.String),
  next: Schema.NullOr(Schema.String),
  records: Schema.Number,
  warnings: Schema.Array(Schema.String)
})
export type PageMeta = typeof PageMeta.Type

/** Builds a page's meta; `extra` carries what other modules own (the trace context). */
export const pageMeta = (meta: PageMeta, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> => ({
  ...extra,
  entity: {
    kind: meta.entity.kind,
    idField: meta.entity.idField,
    ...(meta.entity.updatedAtField === undefined ? {} : { updatedAtField: meta.entity.updatedAtField }),
    ...(meta.entity.createdAtField === undefined ? {} : { createdAtField: meta.entity.createdAtField })
  },
  mode: meta.mode,
  ...(meta.range === undefined ? {} : { range: meta.range }),
  ...(meta.pass === undefined ? {} : { pass: meta.pass }),
  ...(meta.baseline === true ? { baseline: true } : {}),
  cursor: meta.cursor,
  next: meta.next,
  records: meta.records,
  warnings: meta.warnings
})

/** The least a page's meta must say for its records to decode: the entity (tests, tools). */
export const entityMeta = (entity: Entity): { readonly entity: Entity } => ({ entity })

const field = (meta: unknown, name: string): unknown =>
  typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)[name] : undefined

const decodeEntity = Schema.decodeUnknownOption(Schema.Struct({
  kind: Schema.String,
  idField: Schema.optionalKey(Schema.String),
  updatedAtField: Schema.optionalKey(Schema.String),
  createdAtField: Schema.optionalKey(Schema.String)
}))

/** The entity of a page's meta (an id field left out means `id`), or undefined. */
export const entityOf = (meta: unknown): Entity | undefined =>
  Option.match(decodeEntity(field(meta, "entity")), {
    onNone: () => undefined,
    onSome: (e) => ({
      kind: e.kind,
      idField: e.idField ?? "id",
      ...(e.updatedAtField === undefined ? {} : { updatedAtField: e.updatedAtField }),
      ...(e.createdAtField === undefined ? {} : { createdAtField: e.createdAtField })
    })
  })

/** The full pass a page belongs to, or undefined. */
export const passOf = (meta: unknown): string | undefined => {
  const pass = field(meta, "pass")
  return typeof pass === "string" ? pass : undefined
}

/** Whether a page is of its resource's first full sync (it reveals no change). */
export const isBaseline = (meta: unknown): boolean => field(meta, "baseline") === true

// ---------------------------------------------------------------------------------------------
// A completed full pass.
// ---------------------------------------------------------------------------------------------

/** Body of a `PASS_TYPE` record. `createdFrom`: how far back a windowed pass reached (ms). */
export const PassBody = Schema.Struct({
  pass: Schema.Struct({
    id: Schema.String,
    kind: Schema.String,
    startedAt: Schema.Finite,
    createdFrom: Schema.optionalKey(Schema.Finite)
  })
})
export type PassBody = typeof PassBody.Type

/** Meta of a `PASS_TYPE` record: what the pass read. */
export const PassMeta = Schema.Struct({ resource: Schema.String, pages: Schema.Number, records: Schema.Number })
export type PassMeta = typeof PassMeta.Type

export const encodePass = (body: PassBody): string => JSON.stringify(body)
export const decodePass = Schema.decodeUnknownOption(PassBody)

/** A pass completes once: delivered twice, the log keeps the first. */
export const passDedupeKey = (appId: string, businessId: string, passId: string): string =>
  `pass:${tenantKey({ appId, businessId })}:${passId}`

// ---------------------------------------------------------------------------------------------
// The ids a duplicate page of a pass still counts as seen.
// ---------------------------------------------------------------------------------------------

export const PassSeenBody = Schema.Struct({ pass: Schema.String, ids: Schema.Array(Schema.String) })
export type PassSeenBody = typeof PassSeenBody.Type

export const encodePassSeen = (body: PassSeenBody): string => JSON.stringify(body)
export const decodePassSeen = Schema.decodeUnknownOption(PassSeenBody)

/** One per pass and duplicate page (the page's record id). */
export const passSeenDedupeKey = (passId: string, pageRecordId: string): string => `pass-seen:${passId}:${pageRecordId}`

// ---------------------------------------------------------------------------------------------
// The changes the read models found.
// ---------------------------------------------------------------------------------------------

/** One change inside a changes record, as JSON. */
export type ChangeEntry =
  | { readonly change: "ProductAdded"; readonly product: unknown }
  | { readonly change: "ProductUpdated"; readonly product: unknown; readonly changedFields: ReadonlyArray<string> }
  | { readonly change: "ProductDeleted"; readonly productId: string; readonly reason: string }
  | { readonly change: "InventoryChanged"; readonly productId: string; readonly item: unknown }
  | { readonly change: "OrderAdded"; readonly order: unknown }
  | { readonly change: "OrderUpdated"; readonly order: unknown; readonly changedFields: ReadonlyArray<string> }
  | { readonly change: "OrderStatusChanged"; readonly orderId: string; readonly from: string | null; readonly to: string | null; readonly order: unknown }
  | { readonly change: "OrderDeleted"; readonly orderId: string; readonly reason: string }
  | { readonly change: "CustomerDeleted"; readonly customerId: string; readonly reason: string }
  | { readonly change: "BillDeleted"; readonly billId: string; readonly reason: string }
  | { readonly change: "DepotDeleted"; readonly depotId: string; readonly reason: string }
  | { readonly change: "CategoryDeleted"; readonly categoryId: string; readonly reason: string }
  | { readonly change: "BrandDeleted"; readonly brandId: string; readonly reason: string }
  | { readonly change: "InventoryDeleted"; readonly productId: string; readonly reason: string }

/**
 * One change entry as JSON text. `raw` embeds a record's exact stored text under `name`
 * (`product`, `order`, `item`) without parsing and re-serialising it, so large ids and number
 * spellings stay as the service sent them and the hot path pays no second stringify.
 * `origin: "webhook"` marks a change a webhook revealed.
 */
export const changeEntry = (fields: Readonly<Record<string, unknown>>, raw?: { readonly name: "product" | "order" | "item"; readonly text: string }): string => {
  const head = JSON.stringify(fields)
  return raw === undefined ? head : `${head.slice(0, -1)},${JSON.stringify(raw.name)}:${raw.text}}`
}

/** The body of a changes record from its entries (each from `changeEntry`). */
export const changesBody = (entries: ReadonlyArray<string>): string => `{"changes":[${entries.join(",")}]}`

/** The entries of a changes record's parsed body, or undefined when it has no list. */
export const changesOf = (body: unknown): ReadonlyArray<Record<string, unknown>> | undefined => {
  const list = field(body, "changes")
  return Array.isArray(list) ? list as ReadonlyArray<Record<string, unknown>> : undefined
}

/** Meta of a changes record: the record whose projection revealed them. */
export const ChangesMeta = Schema.Struct({
  revealedBy: Schema.Struct({ recordId: Schema.String, offset: Schema.Unknown })
})
export type ChangesMeta = typeof ChangesMeta.Type

export const changesMeta = (revealedBy: ChangesMeta["revealedBy"], extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> => ({
  revealedBy,
  ...extra
})

/** One changes record per revealing record: relayed twice, the log keeps the first. */
export const changesDedupeKey = (revealingRecordId: string): string => `changes:${revealingRecordId}`
