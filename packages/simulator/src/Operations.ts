/**
 * The operations the simulator serves: every read and every write of the catalogue
 * (`@ocs/protocol` Catalogue, written from docs/api-catalogue.md) at its family and path.
 * The catalogue gives each read its filters, page-size maximum and window; this module adds
 * what the simulator decides on its own: the permission it needs, the cursor shapes it
 * issues, how its last page says "no more", and whether the world answers it (a typed
 * lister, Listers.ts) or the generic store (GenericStore.ts).
 */
import * as Catalogue from "@ocs/protocol/Catalogue"
import type { ShapeName } from "./Cursor.ts"

export type Family = "pos" | "vpage"

/** Reads the world answers with its own records (Listers.ts). */
export type Typed = "product" | "inventory" | "order" | "bill" | "customer" | "depot" | "category" | "brand" | "orderDeleted" | "billDeleted"

interface Common {
  readonly family: Family
  readonly resource: string
  readonly operation: string
  /** The permission (data page) a token needs; undefined: any token may call it (business/*). */
  readonly permission: string | undefined
  /** Per-operation rate limit, overriding the default when present (none is documented). */
  readonly rateLimit?: { readonly limit: number; readonly windowMs?: number }
}

export interface ListOperation extends Common {
  readonly kind: "list"
  readonly entry: Catalogue.CatalogueEntry
  readonly typed: Typed | undefined
  readonly defaultSize: number
  readonly maxSize: number
  /** Cursor shapes used in turn, page after page (Paginator rule 3). */
  readonly cursorShapes: ReadonlyArray<ShapeName>
  /** How the last page says "no more" (Paginator rule 4). */
  readonly end: "null" | "absentKey" | "noPaginator"
  readonly filters: ReadonlyArray<string>
  readonly sortable: ReadonlyArray<string>
}

/** A read whose `data` is one object (product/detail, app/checkaccesstoken). */
export interface ObjectOperation extends Common {
  readonly kind: "object"
  readonly entry: Catalogue.CatalogueEntry
  readonly filters: ReadonlyArray<string>
}

/** A write (docs/api-catalogue.md, "Write operations"); ApiWrite.ts serves it by `entry.kind`. */
export interface WriteOperation extends Common {
  readonly kind: "write"
  readonly entry: Catalogue.WriteEntry
}

export type Operation = ListOperation | ObjectOperation | WriteOperation

const TYPED: Readonly<Record<string, Typed>> = {
  "product/list": "product",
  "product/inventory": "inventory",
  "order/list": "order",
  "bill/list": "bill",
  "customer/list": "customer",
  "business/depot": "depot",
  "product/category": "category",
  "product/brand": "brand",
  "order/deleted": "orderDeleted",
  "bill/deleted": "billDeleted"
}

/**
 * The permission of an operation's data: product reads "product" (stock: "inventory"),
 * order/* "order", bill/* "bill", customer/* "customer"; business/* and the token check need
 * none; any other resource its own name (Authentication rule 5).
 */
export const permissionOf = (resource: string, operation: string): string | undefined =>
  resource === "business" || resource === "app"
    ? undefined
    : resource === "product" && operation === "inventory"
    ? "inventory"
    : resource

/**
 * Cursor shapes. The documented `next` examples are `{"id":100}` objects on POS and arrays on
 * Vpage; product/list and order/list rotate through more shapes, every one with keys a
 * plain-JSON client reorders, so that clients which do not keep the cursor's text are caught
 * under strict cursors.
 */
const SHAPES: Readonly<Record<string, ReadonlyArray<ShapeName>>> = {
  "pos product/list": ["keyed", "object", "array"],
  "pos order/list": ["keyed", "pair", "object"],
  "pos bill/list": ["keyed", "nested"],
  "pos product/inventory": ["keyed", "pair"]
}

const EXTRA_SORT: Readonly<Record<string, ReadonlyArray<string>>> = {
  "product/list": ["id", "name", "price", "updatedAt"],
  "order/list": ["id", "updatedAt"],
  "product/inventory": ["productId"]
}

const fromEntry = (e: Catalogue.CatalogueEntry): Operation => {
  const key = `${e.resource}/${e.operation}`
  const common = { family: e.family, resource: e.resource, operation: e.operation, permission: permissionOf(e.resource, e.operation) }
  if (e.shape === "object") return { ...common, kind: "object", entry: e, filters: Object.keys(e.filters) }
  const typed = e.family === "pos" ? TYPED[key] : undefined
  return {
    ...common,
    kind: "list",
    entry: e,
    typed,
    defaultSize: 20,
    maxSize: e.pageSizeMax ?? (e.family === "vpage" ? 50 : 100),
    cursorShapes: SHAPES[`${e.family} ${key}`] ?? (e.family === "vpage" ? ["array"] : ["keyed"]),
    end: key === "order/list" || e.family === "vpage" ? "absentKey" : "null",
    filters: Object.keys(e.filters),
    sortable: EXTRA_SORT[key] ?? e.sort ?? ["id"]
  }
}

export const operations: ReadonlyArray<Operation> = [
  ...Catalogue.entries.map(fromEntry),
  ...Catalogue.writes.map((entry): WriteOperation => ({
    kind: "write",
    family: entry.family,
    resource: entry.resource,
    operation: entry.operation,
    permission: entry.permission,
    entry
  }))
]

export const operationKey = (operation: Pick<Operation, "resource" | "operation">): string =>
  `${operation.resource}/${operation.operation}`

const byFamily = new Map<string, Operation>()
for (const op of operations) byFamily.set(`${op.family} ${operationKey(op)}`, op)

export const find = (family: Family, key: string): Operation | undefined => byFamily.get(`${family} ${key}`)

/** Every permission a token can be granted. */
export const allPermissions: ReadonlyArray<string> = [
  ...new Set(operations.flatMap((op) => (op.permission === undefined ? [] : [op.permission])))
]
