/**
 * The operations the simulator serves, declared as data (docs/architecture.md): an operation
 * the spec does not show is one more entry here plus, for a new resource, a lister in
 * Listers.ts (list operations) or a handler beside ApiAdd.ts (add operations).
 */
import type { ShapeName } from "./Cursor.ts"

export type Family = "pos" | "vpage"
export type Resource = "product" | "order" | "payment" | "inventory"

interface Common {
  readonly resource: Resource
  readonly operation: string
  readonly families: ReadonlyArray<Family>
  /** The permission (data page) a token needs; see Auth. */
  readonly permission: string
  /** Per-operation rate limit (spec: Limits), overriding the default when present. */
  readonly rateLimit?: { readonly limit: number; readonly windowMs?: number }
}

export interface ListOperation extends Common {
  readonly kind: "list"
  readonly defaultSize: number
  readonly maxSize: number
  /** Cursor shapes used in turn, page after page (spec: Paginator rule 3). */
  readonly cursorShapes: ReadonlyArray<ShapeName>
  /**
   * How the last page says "no more" (spec: Paginator rule 4): `next: null`, no `next` key
   * in the paginator, or no paginator at all.
   */
  readonly end: "null" | "absentKey" | "noPaginator"
  readonly filters: ReadonlyArray<string>
  readonly sortable: ReadonlyArray<string>
}

export interface AddOperation extends Common {
  readonly kind: "add"
  readonly maxItems: number
}

export type Operation = ListOperation | AddOperation

const TIME_FILTERS = ["updatedAtFrom", "updatedAtTo"] as const

export const operations: ReadonlyArray<Operation> = [
  {
    kind: "list",
    resource: "product",
    operation: "list",
    families: ["pos", "vpage"],
    permission: "product",
    defaultSize: 20,
    maxSize: 100,
    cursorShapes: ["object", "array", "nested"],
    end: "null",
    filters: ["name", ...TIME_FILTERS],
    sortable: ["id", "name", "price", "updatedAt"]
  },
  {
    kind: "add",
    resource: "product",
    operation: "add",
    families: ["pos", "vpage"],
    permission: "product",
    maxItems: 100
  },
  {
    kind: "list",
    resource: "order",
    operation: "list",
    families: ["pos", "vpage"],
    permission: "order",
    defaultSize: 20,
    maxSize: 100,
    cursorShapes: ["array", "pair", "object"],
    end: "absentKey",
    filters: ["appOrderId", "orderPrivateId", "status", "depotId", ...TIME_FILTERS],
    sortable: ["id", "updatedAt"]
  },
  {
    kind: "list",
    resource: "payment",
    operation: "list",
    families: ["pos"],
    permission: "payment",
    defaultSize: 20,
    maxSize: 100,
    cursorShapes: ["nested", "pair"],
    end: "noPaginator",
    filters: ["orderId", ...TIME_FILTERS],
    sortable: ["id", "updatedAt"]
  },
  {
    kind: "list",
    resource: "inventory",
    operation: "list",
    families: ["pos"],
    permission: "inventory",
    defaultSize: 50,
    maxSize: 200,
    cursorShapes: ["pair", "nested", "object"],
    end: "null",
    filters: ["depotId", ...TIME_FILTERS],
    sortable: ["productId", "updatedAt"]
  }
]

export const operationKey = (operation: Pick<Operation, "resource" | "operation">): string =>
  `${operation.resource}/${operation.operation}`

const byFamily = new Map<string, Operation>()
for (const op of operations) for (const family of op.families) byFamily.set(`${family} ${operationKey(op)}`, op)

export const find = (family: Family, key: string): Operation | undefined => byFamily.get(`${family} ${key}`)

/** Every permission a token can be granted. */
export const allPermissions: ReadonlyArray<string> = [...new Set(operations.map((op) => op.permission))]
