/**
 * What every read query shares: the tenant condition, keyset pages, lossless JSON columns and
 * LIKE patterns. Every query starts with `ofTenant`.
 */
import { Json } from "@ocs/protocol"
import { and, eq, gt, or, sql } from "drizzle-orm"
import type { SQLiteColumn } from "drizzle-orm/sqlite-core"
import { Result } from "effect"
import type * as V from "../Views.ts"

const MAX_LIMIT = 1000

export const limitOf = (options: V.PageOptions | undefined) =>
  Math.max(1, Math.min(MAX_LIMIT, Math.trunc(options?.limit ?? 100)))

/** Stored JSON is written by `Json.stringify`; a row that does not parse is kept as its text. */
export const parse = (text: string | null): Json.JsonValue => {
  if (text === null) return null
  const r = Json.parse(text)
  return Result.isSuccess(r) ? r.success : text
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/** Any of `columns` contains `search` (ASCII case folding, as SQLite's LIKE does); none when empty. */
export const contains = (search: string | undefined, columns: ReadonlyArray<SQLiteColumn>) => {
  if (search === undefined || search.length === 0) return undefined
  const pattern = `%${escapeLike(search)}%`
  return or(...columns.map((c) => sql`${c} LIKE ${pattern} ESCAPE '\\'`))
}

export const ofTenant = (table: { appId: SQLiteColumn; businessId: SQLiteColumn }, tenant: V.Tenant) =>
  and(eq(table.appId, tenant.appId), eq(table.businessId, tenant.businessId))

/** `eq` when the filter is given, nothing when it is not. */
export const when = <A>(value: A | undefined, condition: (value: A) => ReturnType<typeof eq>) =>
  value === undefined ? undefined : condition(value)

/** An entity table with tombstones, as its read queries see it. */
interface EntityColumns {
  readonly appId: SQLiteColumn
  readonly businessId: SQLiteColumn
  readonly id: SQLiteColumn
  readonly deleted: SQLiteColumn
}

/**
 * What every page of an entity with tombstones starts with: the tenant, live rows unless
 * `includeDeleted`, and the keyset bound (ids after `after`). Spread into the query's `and`.
 */
export const entityPage = (table: EntityColumns, tenant: V.Tenant, options: (V.PageOptions & { readonly includeDeleted?: boolean | undefined }) | undefined) => [
  ofTenant(table, tenant),
  options?.includeDeleted === true ? undefined : eq(table.deleted, 0),
  when(options?.after, (v) => gt(table.id, v))
]

/** One entity of the tenant by id, tombstones included. */
export const byId = (table: { readonly appId: SQLiteColumn; readonly businessId: SQLiteColumn; readonly id: SQLiteColumn }, tenant: V.Tenant, id: string) =>
  and(ofTenant(table, tenant), eq(table.id, id))

export const page = <A extends { readonly id: string }>(items: ReadonlyArray<A>, limit: number): V.Page<A> => ({
  items,
  next: items.length === limit ? items[items.length - 1]!.id : undefined
})

/** A row with its `record` column parsed. */
export const withRecord = <R extends { readonly record: string }>(row: R): Omit<R, "record"> & { readonly record: Json.JsonValue } =>
  ({ ...row, record: parse(row.record) })
