/**
 * Lossless JSON for the Open Commerce Service API.
 *
 * Ids and businessId may exceed 2^53 (docs/api-catalogue.md, webhook envelope, businessId is a bigint), so a
 * plain `JSON.parse` would silently round them. `parse` reads every integer literal outside the
 * safe range as a `bigint` (using the reviver's `context.source`, the exact text of each
 * primitive, available from Node 22+), and `stringify` writes bigints back digit for digit.
 *
 * Some values must survive byte for byte (paginator cursors, webhook bodies kept for audit).
 * `RawJson` carries a piece of JSON text that `stringify` splices in unchanged, and `extract`
 * takes the exact text of a value at a path out of a document without re-serialising it.
 */
import { Data, Result } from "effect"

const RAW_FOUND = Symbol("RawJson found")

/** A JSON value as this module parses it: unsafe integers become bigint. */
export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

/** Why a text is not acceptable JSON; `position` is a character offset when known. */
export class JsonError extends Data.TaggedError("JsonError")<{
  readonly reason: "Syntax" | "TooDeep" | "InvalidUtf8" | "Empty"
  readonly message: string
  readonly position?: number | undefined
}> {}

/** Deepest nesting accepted; deeper documents are refused before they can exhaust the stack. */
export const MAX_DEPTH = 256

const INTEGER_LITERAL = /^-?(?:0|[1-9][0-9]*)$/
const MAYBE_UNSAFE = /[0-9]{16}/

const reviver = function(this: unknown, _key: string, value: unknown, context?: { source?: string }) {
  if (typeof value === "number" && context?.source !== undefined && !Number.isSafeInteger(value)) {
    const source = context.source
    if (INTEGER_LITERAL.test(source)) return BigInt(source)
  }
  return value
}

/**
 * Parses JSON text without losing integer digits. Refuses documents nested deeper than
 * `MAX_DEPTH` (hostile input) with a typed error instead of a stack overflow.
 */
export const parse = (text: string): Result.Result<JsonValue, JsonError> => parseWith(text, true)

/**
 * `parse`'s checks (syntax, depth, empty), but integers beyond 2^53 come back as rounded
 * doubles, as `JSON.parse` gives them. For a caller that only validates a document and reads
 * the few fields it needs by their exact text (`extract`), such as the webhook receiver.
 */
export const parseLossy = (text: string): Result.Result<JsonValue, JsonError> => parseWith(text, false)

const parseWith = (text: string, bigints: boolean): Result.Result<JsonValue, JsonError> => {
  if (text.trim().length === 0) {
    return Result.fail(new JsonError({ reason: "Empty", message: "empty body: expected a JSON document" }))
  }
  let value: JsonValue
  try {
    const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    // Only an integer of 16 or more digits can exceed 2^53; without one the reviver (costly
    // on large documents) has nothing to do.
    value = (bigints && MAYBE_UNSAFE.test(json) ? JSON.parse(json, reviver as never) : JSON.parse(json)) as JsonValue
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause)
    const position = /position (\d+)/.exec(message)?.[1]
    return Result.fail(
      new JsonError({
        reason: "Syntax",
        message: `invalid JSON: ${message}`,
        position: position === undefined ? undefined : Number(position)
      })
    )
  }
  // V8 parses deep documents without recursion, but recursive code downstream would not
  // survive them: refuse what nests deeper than MAX_DEPTH. Walking the parsed values costs
  // far less than scanning the text.
  if (depthExceeds(value, MAX_DEPTH)) {
    return Result.fail(new JsonError({ reason: "TooDeep", message: `JSON nested deeper than ${MAX_DEPTH} levels` }))
  }
  return Result.succeed(value)
}

// ignoreBOM: true keeps a leading byte-order mark in the text, so the text stays byte-exact;
// `parse` skips it (RFC 8259 section 8.1 lets a parser ignore it).
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Decodes bytes as UTF-8, refusing invalid sequences (never replacing them silently). A
 * leading byte-order mark is kept, so encoding the text gives back the same bytes.
 */
export const decodeUtf8 = (bytes: Uint8Array): Result.Result<string, JsonError> => {
  try {
    return Result.succeed(utf8.decode(bytes))
  } catch {
    return Result.fail(new JsonError({ reason: "InvalidUtf8", message: "body is not valid UTF-8" }))
  }
}

/** Bytes to a parsed value and the exact text, in one step. */
export const parseBytes = (bytes: Uint8Array): Result.Result<{ readonly text: string; readonly value: JsonValue }, JsonError> =>
  Result.flatMap(decodeUtf8(bytes), (text) => Result.map(parse(text), (value) => ({ text, value })))

/**
 * A piece of JSON text that `stringify` writes unchanged (e.g. a cursor received earlier).
 * Only this module's `stringify` knows it: never hand it to `JSON.stringify`.
 */
export class RawJson {
  readonly _tag = "RawJson"
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
  /** `JSON.stringify` cannot splice raw text: refuse, so `stringify` takes its own writer. */
  toJSON(): never {
    throw RAW_FOUND
  }
}

/**
 * Validates that `text` is exactly one JSON value (surrounding whitespace allowed) and wraps
 * it without touching its bytes.
 */
export const raw = (text: string): Result.Result<RawJson, JsonError> =>
  Result.map(parse(text), () => new RawJson(text.trim()))

/**
 * Serialises a value as JSON. Differences from `JSON.stringify`: bigints are written as
 * integer literals; `RawJson` values are spliced in byte for byte; `undefined` properties are
 * left out (as JSON.stringify does); objects keep their insertion order.
 */
export const stringify = (value: unknown): string => {
  // Fast paths: the engine's own serialiser, first without a replacer (most values hold no
  // bigint; one makes it throw), then with bigints written through JSON.rawJSON. A RawJson
  // (object or array text) cannot go either way: meeting one switches to the writer below.
  try {
    return JSON.stringify(value) ?? "null"
  } catch (e) {
    if (e !== RAW_FOUND && !(e instanceof TypeError)) throw e
  }
  return stringifyParsed(value)
}

// JSON.rawJSON (Node 21+) writes a primitive's text unchanged; the TypeScript lib lacks it.
const rawJSON = (JSON as unknown as { readonly rawJSON: (text: string) => unknown }).rawJSON

function fastReplacer(this: unknown, _key: string, v: unknown): unknown {
  if (typeof v === "bigint") return rawJSON(v.toString())
  if (v instanceof RawJson) throw RAW_FOUND
  return v
}

/**
 * `stringify` for values that likely hold bigints (what `parse` hands out for big ids): it
 * goes straight to the bigint-aware serialiser instead of trying the plain one first.
 */
export const stringifyParsed = (value: unknown): string => {
  try {
    return JSON.stringify(value, fastReplacer) ?? "null"
  } catch (e) {
    if (e !== RAW_FOUND) throw e
  }
  const out: Array<string> = []
  write(value, out)
  return out.join("")
}

const write = (value: unknown, out: Array<string>): void => {
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value))
      return
    case "number":
      out.push(Number.isFinite(value) ? String(value) : "null")
      return
    case "bigint":
      out.push(value.toString())
      return
    case "boolean":
      out.push(value ? "true" : "false")
      return
    case "undefined":
    case "function":
    case "symbol":
      out.push("null")
      return
  }
  if (value === null) {
    out.push("null")
    return
  }
  if (value instanceof RawJson) {
    out.push(value.text)
    return
  }
  if (Array.isArray(value)) {
    out.push("[")
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(",")
      write(value[i], out)
    }
    out.push("]")
    return
  }
  if (value instanceof Date) {
    out.push(JSON.stringify(value.toISOString()))
    return
  }
  out.push("{")
  let first = true
  for (const key of Object.keys(value as object)) {
    const v = (value as Record<string, unknown>)[key]
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue
    if (!first) out.push(",")
    first = false
    out.push(JSON.stringify(key), ":")
    write(v, out)
  }
  out.push("}")
}

// ---------------------------------------------------------------------------------------------
// Exact extraction: the text of the value at a path, as it appears in the document.
// ---------------------------------------------------------------------------------------------

/**
 * Returns the exact text of the value at `path` (object keys) in a JSON document, or
 * `undefined` when a key on the path is absent. The document must be valid JSON (`parse` it
 * first); this scanner only skips over values, it does not validate them. When a key appears
 * twice, the last one wins, as with `JSON.parse`.
 */
export const extract = (text: string, path: ReadonlyArray<string>): string | undefined => {
  let start = 0
  let end = text.length
  for (const key of path) {
    const found = findMember(text, start, end, key)
    if (found === undefined) return undefined
    start = found.start
    end = found.end
  }
  return text.slice(skipWs(text, start), trimEnd(text, end))
}

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

const skipWs = (text: string, i: number): number => {
  while (i < text.length && isWs(text.charCodeAt(i))) i++
  return i
}

const trimEnd = (text: string, end: number): number => {
  while (end > 0 && isWs(text.charCodeAt(end - 1))) end--
  return end
}

/** Index just past the string starting at `i` (which holds the opening quote). */
const skipString = (text: string, i: number): number => {
  i++
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x5c) i += 2
    else if (c === 0x22) return i + 1
    else i++
  }
  return i
}

/** Index just past the value starting at (or after whitespace from) `i`. */
const skipValue = (text: string, i: number): number => {
  i = skipWs(text, i)
  const c = text.charCodeAt(i)
  if (c === 0x22) return skipString(text, i)
  if (c === 0x7b || c === 0x5b) {
    let depth = 0
    while (i < text.length) {
      const d = text.charCodeAt(i)
      if (d === 0x22) {
        i = skipString(text, i)
        continue
      }
      if (d === 0x7b || d === 0x5b) depth++
      else if (d === 0x7d || d === 0x5d) {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return i
  }
  // number, true, false, null
  while (i < text.length) {
    const d = text.charCodeAt(i)
    if (d === 0x2c || d === 0x7d || d === 0x5d || isWs(d)) break
    i++
  }
  return i
}

const findMember = (
  text: string,
  start: number,
  end: number,
  key: string
): { readonly start: number; readonly end: number } | undefined => {
  let i = skipWs(text, start)
  if (text.charCodeAt(i) !== 0x7b) return undefined
  i++
  let found: { start: number; end: number } | undefined
  while (i < end) {
    i = skipWs(text, i)
    if (text.charCodeAt(i) === 0x7d) break
    if (text.charCodeAt(i) === 0x2c) {
      i++
      continue
    }
    const keyEnd = skipString(text, i)
    const name = JSON.parse(text.slice(i, keyEnd)) as string
    i = skipWs(text, keyEnd)
    i++ // the colon
    const valueStart = skipWs(text, i)
    const valueEnd = skipValue(text, valueStart)
    if (name === key) found = { start: valueStart, end: valueEnd }
    i = valueEnd
  }
  return found
}

/** True when a parsed value nests containers deeper than `max` (iterative: no recursion). */
const depthExceeds = (root: JsonValue, max: number): boolean => {
  if (root === null || typeof root !== "object") return false
  const values: Array<JsonValue> = [root]
  const depths: Array<number> = [1]
  while (values.length > 0) {
    const value = values.pop()!
    const depth = depths.pop()!
    if (depth > max) return true
    const children = Array.isArray(value) ? value : Object.values(value as object)
    for (const child of children as ReadonlyArray<JsonValue>) {
      if (child !== null && typeof child === "object") {
        values.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}

/** Structural equality of parsed JSON values (bigint-aware; key order ignored). */
export const equals = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a === "bigint" || typeof b === "bigint") return typeof a === typeof b && a === b
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as ReadonlyArray<unknown>
    return a.length === bb.length && a.every((x, i) => equals(x, bb[i]))
  }
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length &&
    ka.every((k) => Object.hasOwn(b, k) && equals((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}
