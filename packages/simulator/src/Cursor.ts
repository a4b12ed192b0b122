/**
 * Paginator cursors (`paginator.next`).
 *
 * Stateless: a cursor holds the position itself (page number, sort, the sort values and id
 * of the last examined record) plus a signature, so a client can resume later from a stored
 * cursor, even after a restart with the same seed. Its JSON shape varies between operations
 * and between pages of one operation (docs/api-catalogue.md, Paginator 3): objects whose keys are not in
 * alphabetical order and include integer-like keys (which a JavaScript object would move to
 * the front), arrays, nesting, and integer literals above 2^53.
 *
 * By default a cursor is accepted when it is JSON-equal to the one issued (keys in any order),
 * as the real service does: plain-JSON clients move integer-like keys to the front. Strict
 * cursors (option, flag or control switch) insist on the issued text (Paginator rule 2): the
 * decoded position is re-encoded and compared with the received text (whitespace ignored).
 * Anything else (an object reduced to a value, an array turned into an object, a key lost, a
 * big number rounded, and under strict cursors a key moved) is refused with a message saying
 * what changed.
 */
import * as Json from "@ocs/protocol/Json"
import { minifyJson } from "./internal/Http.ts"
import { fnv1a } from "./internal/Random.ts"
import type { Seek, SortKey, SortValue } from "./Listing.ts"

export type ShapeName = "keyed" | "object" | "array" | "nested" | "pair" | "id"

export interface CursorPosition {
  /** 1-based number of the page this cursor leads to. */
  readonly page: number
  readonly sort: ReadonlyArray<SortKey>
  readonly seek: Seek
}

const BIG_NONCE = 18014398509481985n // 2^54 + 1: survives only lossless JSON handling

export const sortSpec = (sort: ReadonlyArray<SortKey>): string =>
  sort.map((k) => `${k.field}:${k.desc ? "desc" : "asc"}`).join(",")

export const parseSortSpec = (spec: string): ReadonlyArray<SortKey> | undefined => {
  if (spec === "") return []
  const keys: Array<SortKey> = []
  for (const part of spec.split(",")) {
    const [field, dir] = part.split(":")
    if (field === undefined || field === "" || (dir !== "asc" && dir !== "desc")) return undefined
    keys.push({ field, desc: dir === "desc" })
  }
  return keys
}

const value = (v: SortValue): string => typeof v === "string" ? JSON.stringify(v) : String(v)
const values = (vs: ReadonlyArray<SortValue>): string => `[${vs.map(value).join(",")}]`

export const signature = (secret: string, operation: string, position: CursorPosition): string => {
  const canonical = `${secret}|${operation}|${position.page}|${sortSpec(position.sort)}|${
    position.seek.values.map((v) => `${typeof v}:${String(v)}`).join(",")
  }|${position.seek.id}`
  return fnv1a(canonical).toString(16).padStart(8, "0") + fnv1a(canonical + "#").toString(16).padStart(8, "0")
}

/** The exact text of a cursor of the given shape. */
export const encode = (shape: ShapeName, position: CursorPosition, sig: string): string => {
  const page = String(position.page)
  const sort = JSON.stringify(sortSpec(position.sort))
  const vs = values(position.seek.values)
  const id = String(position.seek.id)
  switch (shape) {
    case "id":
      // The documented `{"id":100}` itself (docs/api-catalogue.md, "Simulator leniency" 2): the
      // last id only, read back by `rebuilt` with the request's own sort.
      return `{"id":${id}}`
    case "keyed":
      // The documented `{"id":100}` with the rest beside it; "10" is the key a plain-JSON
      // client moves to the front.
      return `{"id":${id},"10":${page},"s":${sort},"v":${vs},"h":"${sig}"}`
    case "object":
      return `{"z":${id},"2":${page},"a":{"s":${sort},"v":${vs}},"h":"${sig}"}`
    case "array":
      return `[${page},${sort},${vs},${id},"${sig}"]`
    case "nested":
      return `{"k":{"10":${id},"1":"${sig}"},"p":[${page},{"s":${sort},"v":${vs}}],"n":${BIG_NONCE + BigInt(position.page)}}`
    case "pair":
      return `[[${id},${vs}],{"9":${page},"sig":"${sig}","s":${sort}}]`
  }
}

type Obj = { readonly [key: string]: Json.JsonValue }
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v)
const isArr = (v: unknown): v is ReadonlyArray<Json.JsonValue> => Array.isArray(v)
const asInt = (v: unknown): number | undefined => typeof v === "number" && Number.isSafeInteger(v) ? v : undefined
const asId = (v: unknown): bigint | undefined =>
  typeof v === "bigint" ? v : typeof v === "number" && Number.isInteger(v) ? BigInt(v) : undefined
const asValues = (v: unknown): ReadonlyArray<SortValue> | undefined => {
  if (!isArr(v)) return undefined
  const out: Array<SortValue> = []
  for (const x of v) {
    if (typeof x === "string" || typeof x === "number" || typeof x === "bigint") out.push(x)
    else return undefined
  }
  return out
}
const position = (page: unknown, sort: unknown, vs: unknown, id: unknown): CursorPosition | undefined => {
  const p = asInt(page)
  const keys = typeof sort === "string" ? parseSortSpec(sort) : undefined
  const vals = asValues(vs)
  const lastId = asId(id)
  if (p === undefined || keys === undefined || vals === undefined || lastId === undefined) return undefined
  return { page: p, sort: keys, seek: { values: vals, id: lastId } }
}

const read = (shape: ShapeName, v: Json.JsonValue): Decoded | undefined => {
  switch (shape) {
    case "id":
      return undefined
    case "keyed":
      return isObj(v) ? decoded(position(v["10"], v["s"], v["v"], v["id"]), v["h"]) : undefined
    case "object": {
      if (!isObj(v) || !isObj(v["a"])) return undefined
      return decoded(position(v["2"], v["a"]["s"], v["a"]["v"], v["z"]), v["h"])
    }
    case "array":
      return isArr(v) ? decoded(position(v[0], v[1], v[2], v[3]), v[4]) : undefined
    case "nested": {
      if (!isObj(v) || !isObj(v["k"]) || !isArr(v["p"]) || !isObj(v["p"][1])) return undefined
      return decoded(position(v["p"][0], v["p"][1]["s"], v["p"][1]["v"], v["k"]["10"]), v["k"]["1"])
    }
    case "pair": {
      if (!isArr(v) || !isArr(v[0]) || !isObj(v[1])) return undefined
      return decoded(position(v[1]["9"], v[1]["s"], v[0][1], v[0][0]), v[1]["sig"])
    }
  }
}

interface Decoded {
  readonly position: CursorPosition
  readonly sig: unknown
}
const decoded = (position: CursorPosition | undefined, sig: unknown): Decoded | undefined =>
  position === undefined ? undefined : { position, sig }

const describe = (v: unknown): string =>
  v === null ? "null" : isArr(v) ? "an array" : isObj(v) ? "an object" : typeof v === "bigint" ? "a number" : `a ${typeof v}`

/** The first difference between the issued and the received cursor, as a sentence. */
const diff = (expected: unknown, actual: unknown, path: string): string | undefined => {
  const at = path === "" ? "the cursor" : path
  if (isObj(expected)) {
    if (!isObj(actual)) return `${at}: expected an object, got ${describe(actual)}`
    for (const key of Object.keys(expected)) {
      if (!Object.hasOwn(actual, key)) return `${path === "" ? "" : path + "."}${key}: key missing`
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) return `${path === "" ? "" : path + "."}${key}: unexpected key`
    }
    for (const key of Object.keys(expected)) {
      const d = diff(expected[key], actual[key], path === "" ? key : `${path}.${key}`)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (isArr(expected)) {
    if (!isArr(actual)) return `${at}: expected an array, got ${describe(actual)}`
    if (actual.length !== expected.length) return `${at}: expected ${expected.length} elements, got ${actual.length}`
    for (let i = 0; i < expected.length; i++) {
      const d = diff(expected[i], actual[i], path === "" ? String(i) : `${path}.${i}`)
      if (d !== undefined) return d
    }
    return undefined
  }
  if (Json.equals(expected, actual)) return undefined
  return `${at}: expected ${String(expected)}, got ${isObj(actual) || isArr(actual) ? describe(actual) : String(actual)}`
}

export interface DecodeOptions {
  readonly secret: string
  readonly operation: string
  readonly shapes: ReadonlyArray<ShapeName>
  /** When false, a cursor whose object keys were reordered is still accepted. */
  readonly strictKeyOrder: boolean
}

/** Decodes a received cursor, or explains why it is not one this server issued. */
export const decode = (
  options: DecodeOptions,
  parsed: Json.JsonValue,
  rawText: string
): { readonly ok: true; readonly position: CursorPosition } | { readonly ok: false; readonly message: string } => {
  const received = minifyJson(rawText)
  let firstProblem: string | undefined
  for (const shape of options.shapes) {
    const got = read(shape, parsed)
    if (got === undefined) continue
    const sig = signature(options.secret, options.operation, got.position)
    const expected = encode(shape, got.position, sig)
    if (expected === received) return { ok: true, position: got.position }
    const expectedValue = Json.parse(expected)
    const structural = expectedValue._tag === "Success" ? diff(expectedValue.success, parsed, "") : undefined
    const shapeChanged = structural !== undefined && /key missing|unexpected key|elements|expected an? (object|array)/.test(structural)
    if (got.sig !== sig && !shapeChanged) {
      firstProblem ??= "cursor content was changed (signature mismatch: a value was edited or a big number rounded)"
      continue
    }
    if (structural === undefined && !options.strictKeyOrder) return { ok: true, position: got.position }
    firstProblem ??= structural ??
      "object keys were reordered or a number was rewritten; send the cursor back exactly as received"
  }
  return {
    ok: false,
    message: firstProblem ??
      `not a cursor issued for this operation (got ${describe(parsed)}); pass back paginator.next exactly as received`
  }
}

/**
 * A cursor read as the documented `{"id": n}` (docs/api-catalogue.md, "Simulator leniency" 2):
 * an object whose `id` is an integer (or an integer written as a string), whatever else it
 * carries. Not strict mode only: the real service answers a client that rebuilds it.
 */
export const rebuilt = (parsed: Json.JsonValue): bigint | undefined => {
  if (!isObj(parsed)) return undefined
  const id = parsed["id"]
  if (typeof id === "string" && /^\d{1,30}$/.test(id)) return BigInt(id)
  return asId(id)
}
