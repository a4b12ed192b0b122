/**
 * Every catalogued read the world has no records of (business/user, promotion/batch,
 * page/list, ...) is answered from here: a few deterministic records per business, built
 * from the entry's documented field tree (docs/api-catalogue.md), paged like the typed reads.
 * Enough for a client to call every documented operation, page through it and store what it
 * gets; the values carry no meaning beyond their kinds.
 *
 * Filters: `ids`/`id` select by the entry's id field; a filter named like a top-level field
 * selects records with that value (a substring for `name`); required filters and the others
 * are accepted and do not narrow.
 */
import * as Json from "@ocs/protocol/Json"
import type { CatalogueEntry, FieldTree, FieldType } from "@ocs/protocol/Catalogue"
import type { Obj } from "./ApiCall.ts"
import type { Business } from "./Auth.ts"
import { fnv1a, hash3 } from "./internal/Random.ts"
import type { Lister } from "./Listers.ts"
import type { Source } from "./Listing.ts"
import { day, unix } from "./Views.ts"

type Rec = { readonly [key: string]: unknown }
interface Generic {
  readonly id: bigint
  readonly record: Rec
}

const isTime = (name: string) => /At$|^createdTime$|^expiredAt$|^expriredAt$|^updateAt$/.test(name)
const isDate = (name: string) => /[dD]ate/.test(name) && !name.startsWith("update")

/** A value of `type` for the field `name` of record `pos`. */
const value = (type: FieldType, name: string, pos: number, seed: number, epochMs: number, depth: number): unknown => {
  const h = hash3(seed, pos, fnv1a(name))
  if (typeof type === "string") {
    switch (type) {
      case "number":
        return isTime(name) ? unix(epochMs) - (h % (90 * 86400)) : /status$/i.test(name) ? 1 : 1 + (h % 1000)
      case "string":
        return isDate(name) ? day(epochMs - (h % 90) * 86_400_000) : `${name} ${pos + 1}`
      case "boolean":
        return h % 2 === 0
      default:
        return null
    }
  }
  if (Array.isArray(type)) {
    if (depth > 3) return []
    const item = (type as readonly [FieldType])[0]
    return [value(item, name, pos, seed, epochMs, depth + 1)]
  }
  return tree(type as FieldTree, pos, seed, epochMs, depth + 1)
}

const tree = (fields: FieldTree, pos: number, seed: number, epochMs: number, depth: number): Rec =>
  Object.fromEntries(Object.entries(fields).map(([name, type]) => [name, value(type, name, pos, seed, epochMs, depth)]))

/** Sets the value at a dotted path (creating objects on the way). */
const setAt = (record: Record<string, unknown>, path: string, v: unknown): void => {
  const keys = path.split(".")
  let at = record
  for (const key of keys.slice(0, -1)) {
    const next = at[key]
    if (typeof next !== "object" || next === null || Array.isArray(next)) at[key] = {}
    at = at[key] as Record<string, unknown>
  }
  at[keys[keys.length - 1]!] = v
}

const getAt = (record: Rec, path: string): unknown =>
  path.split(".").reduce<unknown>((at, key) => (typeof at === "object" && at !== null ? (at as Rec)[key] : undefined), record)

/** The type of the field at a dotted path of a tree, if documented. */
const typeAt = (fields: FieldTree, path: string): FieldType | undefined =>
  path.split(".").reduce<FieldType | undefined>((at, key) =>
    at !== undefined && typeof at === "object" && !Array.isArray(at) ? (at as FieldTree)[key] : undefined, fields)

/** How many records a business holds for an entry: 5 to 8, by seed. */
export const countOf = (entry: CatalogueEntry, seed: number): number =>
  5 + (hash3(seed, 0, fnv1a(`${entry.resource}/${entry.operation}`)) % 4)

/** Record `pos` of an entry for a business. */
export const recordOf = (entry: CatalogueEntry, seed: number, epochMs: number, pos: number): Rec => {
  const salt = seed ^ fnv1a(`${entry.family}:${entry.resource}/${entry.operation}`)
  const record = tree(entry.record, pos, salt, epochMs, 0) as Record<string, unknown>
  if (entry.idField !== undefined) {
    // Ids are unique and grow with the position; string ids stay strings (documented so).
    const n = 1000 + pos + 1
    setAt(record, entry.idField, typeAt(entry.record, entry.idField) === "string" ? String(n) : n)
  }
  return record
}

const matches = (entry: CatalogueEntry, f: Obj) => {
  const tests: Array<(r: Rec) => boolean> = []
  const idField = entry.idField
  for (const [name, wanted] of Object.entries(f)) {
    // A required filter names what to read (a batch, an order): a parameter, not a selection.
    if (wanted === null || wanted === undefined || (entry.requiredFilters ?? []).includes(name)) continue
    if (idField !== undefined && (name === "ids" || name === "id")) {
      const set = new Set((Array.isArray(wanted) ? wanted : [wanted]).map((v) => String(v)))
      tests.push((r) => set.has(String(getAt(r, idField))))
    } else if (name === "name" && typeof wanted === "string" && entry.record["name"] !== undefined) {
      const needle = wanted.toLowerCase()
      tests.push((r) => String(r["name"]).toLowerCase().includes(needle))
    } else if (typeof entry.record[name] === "string" && typeof wanted !== "object") {
      tests.push((r) => Json.equals(r[name], wanted))
    }
  }
  return tests.length === 0 ? undefined : (g: Generic) => tests.every((t) => t(g.record))
}

/** The lister of a catalogued read with no typed lister. */
export const genericLister = (entry: CatalogueEntry, business: Business, filters: Obj): Lister<Generic> => {
  const { seed, epochMs } = business.catalog
  const count = countOf(entry, seed)
  const source: Source<Generic> = {
    positions: () => count,
    at: (pos) => ({ id: BigInt(pos + 1), record: recordOf(entry, seed, epochMs, pos) }),
    idAt: (pos) => BigInt(pos + 1),
    posOf: (id) => (id >= 1n && id <= BigInt(count) ? Number(id) - 1 : undefined),
    base: 1n,
    version: () => 0,
    sortValue: (g, field) => {
      const v = g.record[field]
      return typeof v === "number" || typeof v === "string" ? v : g.id
    }
  }
  return { source, predicate: matches(entry, filters), write: (g) => Json.stringify(g.record), cacheKey: `generic:${entry.family}:${entry.resource}/${entry.operation}` }
}
