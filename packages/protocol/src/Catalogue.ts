/**
 * The catalogue: every documented read operation of the API as data (docs/api-catalogue.md).
 *
 * Each entry names its family, path, filters, page-size maximum, id and time fields, date
 * window and the documented field tree of its records. `operation(entry)` turns an entry into
 * an `Operation` the transport can call and the sync engine can page; `recordSchema(tree)`
 * gives an open schema for any documented record (documented fields checked loosely, every
 * other field kept).
 */
import { Schema } from "effect"
import type { CatalogueEntry, FieldTree, FieldType } from "./catalogue/CatalogueEntry.ts"
import { documented } from "./catalogue/documented.ts"
import { type WriteEntry, type WriteKind, writes as writeEntries } from "./catalogue/writes.ts"

export type { CatalogueEntry, Certainty, FieldTree, FieldType, FilterKind, WindowRule } from "./catalogue/CatalogueEntry.ts"
export type { WriteEntry, WriteKind } from "./catalogue/writes.ts"

/** Every documented read operation, POS and Vpage. */
export const entries: ReadonlyArray<CatalogueEntry> = documented

/** `<family>:/v3.0/<resource>/<operation>`, the catalogue's key (same as `Operation.key`). */
export const keyOf = (e: Pick<CatalogueEntry, "family" | "resource" | "operation">): string =>
  `${e.family}:/v3.0/${e.resource}/${e.operation}`

const byKey = new Map(entries.map((e) => [keyOf(e), e]))

/** The entry of an operation, if the catalogue has it. */
export const find = (family: "pos" | "vpage", resource: string, operation: string): CatalogueEntry | undefined =>
  byKey.get(keyOf({ family, resource, operation }))

/** Every write operation the engine sends (docs/api-catalogue.md, "Write operations"). */
export const writes: ReadonlyArray<WriteEntry> = writeEntries

const writeByKind = new Map(writes.map((w) => [w.kind, w]))

/** The write entry of a command kind. */
export const write = (kind: WriteKind): WriteEntry => writeByKind.get(kind)!

const Rest = [Schema.Record(Schema.String, Schema.Unknown)] as const

// Leaves are checked loosely: the reference documents kinds, and real answers vary (ids as
// strings, amounts as numeric strings, big integers as bigints from the lossless parser).
const leaf = {
  number: Schema.Union([Schema.Finite, Schema.BigInt, Schema.String]),
  string: Schema.Union([Schema.String, Schema.Finite, Schema.BigInt]),
  boolean: Schema.Union([Schema.Boolean, Schema.Finite]),
  unknown: Schema.Unknown
} as const

const fieldSchema = (type: FieldType): Schema.Top =>
  typeof type === "string"
    ? leaf[type]
    : Array.isArray(type)
    ? Schema.Array(fieldSchema((type as readonly [FieldType])[0]))
    : recordSchema(type as FieldTree)

/** An open schema of a documented record: every documented field optional and nullable. */
export const recordSchema = (tree: FieldTree): Schema.Codec<Record<string, unknown>, Record<string, unknown>> =>
  Schema.StructWithRest(
    Schema.Struct(Object.fromEntries(Object.entries(tree).map(([k, v]) => [k, Schema.optional(Schema.NullOr(fieldSchema(v)))]))),
    Rest
  ) as unknown as Schema.Codec<Record<string, unknown>, Record<string, unknown>>
