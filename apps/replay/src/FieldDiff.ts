/**
 * Field-level differences between two JSON values (entity states, JSON columns): leaves are
 * compared by their lossless JSON text (integers beyond 2^53 stay exact), paths read like
 * `price`, `vendor.note`, `products[1].quantity`.
 */
import * as Json from "@ocs/protocol/Json"

export interface Change {
  readonly path: string
  readonly op: "added" | "removed" | "changed"
  /** JSON text of the value before (absent when added). */
  readonly from?: string
  /** JSON text of the value after (absent when removed). */
  readonly to?: string
}

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Leaves of a JSON value by path (an empty object or array is a leaf). */
export const flatten = (value: unknown, path = "", out = new Map<string, string>()): Map<string, string> => {
  if (isObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) flatten(v, path === "" ? k : `${path}.${k}`, out)
  } else if (Array.isArray(value) && value.length > 0) {
    value.forEach((v, i) => flatten(v, `${path}[${i}]`, out))
  } else {
    out.set(path === "" ? "$" : path, value === undefined ? "null" : Json.stringify(value))
  }
  return out
}

/** What changed from `before` to `after` (`before` undefined: every leaf is added). */
export const diff = (before: unknown, after: unknown): ReadonlyArray<Change> => {
  const a = before === undefined ? new Map<string, string>() : flatten(before)
  const b = flatten(after)
  const changes: Array<Change> = []
  for (const [path, to] of b) {
    const from = a.get(path)
    if (from === undefined) changes.push({ path, op: "added", to })
    else if (from !== to) changes.push({ path, op: "changed", from, to })
  }
  for (const [path, from] of a) if (!b.has(path)) changes.push({ path, op: "removed", from })
  return changes
}

/** `price: 10 -> 12`, `+ name: "A"`, `- barcode: "893"`. */
export const describe = (change: Change): string => {
  switch (change.op) {
    case "added":
      return `+ ${change.path}: ${change.to}`
    case "removed":
      return `- ${change.path}: ${change.from}`
    case "changed":
      return `~ ${change.path}: ${change.from} -> ${change.to}`
  }
}
