/**
 * Finds the top-level `webhooksVerifyToken` member of a delivery's raw bytes without parsing
 * the body (docs/api-catalogue.md, Authentication 8), so that a delivery with a wrong token costs a byte walk,
 * not a UTF-8 decode and a JSON.parse of up to `maxBodyBytes`. The same walk gives the byte
 * range of the token's value, which the receiver replaces before storing the body.
 *
 * A small hand-written scanner over the top level only: nested objects and arrays are skipped
 * by counting brackets outside strings, strings by finding their closing quote (escapes
 * counted). It stops as soon as it has the member. It never builds a string of the body: only
 * a key that could be the field and the token itself are decoded, both bounded in length.
 *
 * On valid JSON it agrees with JSON.parse on the first top-level occurrence of the field; the
 * receiver calls it again from `next` to refuse a body that carries the field twice (JSON.parse
 * would keep the last one, so the two could disagree about which token was checked). On
 * invalid JSON it may report a field that JSON.parse would refuse (it does not check scalars or
 * bracket kinds): the receiver parses every body it authenticates, so nothing invalid is stored.
 */
import { Json } from "@ocs/protocol"
import { Result } from "effect"

export const TOKEN_FIELD = "webhooksVerifyToken"

/** A token value longer than this (raw bytes, quotes excluded) is never decoded: it cannot match. */
export const MAX_TOKEN_BYTES = 4096

export type Scan =
  /**
   * The member's value occupies `[valueStart, valueEnd)` (quotes included for a string).
   * `token` is undefined when the value is not a string, is not valid UTF-8, or is too long.
   * `next`: where to look for a second occurrence.
   */
  | { readonly _tag: "Found"; readonly valueStart: number; readonly valueEnd: number; readonly token: string | undefined; readonly next: number }
  /** A top-level object without the member (from the scan's start to its closing brace). */
  | { readonly _tag: "Absent" }
  /** Valid-looking JSON whose top level is not an object (an array, a string, a number...). */
  | { readonly _tag: "NotObject" }
  /** Not JSON: empty, truncated, or a syntax error met before the member. */
  | { readonly _tag: "Malformed" }

const ABSENT: Scan = { _tag: "Absent" }
const NOT_OBJECT: Scan = { _tag: "NotObject" }
const MALFORMED: Scan = { _tag: "Malformed" }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d

const FIELD_BYTES = new TextEncoder().encode(TOKEN_FIELD)
// The longest spelling of the key: every character as a `\uXXXX` escape.
const MAX_KEY_BYTES = FIELD_BYTES.length * 6

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

const skipSpace = (bytes: Uint8Array, i: number): number => {
  while (i < bytes.length && isSpace(bytes[i]!)) i++
  return i
}

/**
 * `i` at an opening quote: the index of the closing quote, or -1. `indexOf` finds quotes
 * natively; a quote preceded by an odd run of backslashes is escaped.
 */
const stringEnd = (bytes: Uint8Array, i: number): number => {
  let q = i
  for (;;) {
    q = bytes.indexOf(QUOTE, q + 1)
    if (q === -1) return -1
    let backslashes = 0
    while (bytes[q - 1 - backslashes] === BACKSLASH) backslashes++
    if ((backslashes & 1) === 0) return q
  }
}

/** `i` at the first byte of a value: the index just after it, or -1 (end of input). */
const valueEnd = (bytes: Uint8Array, i: number): number => {
  const b = bytes[i]
  if (b === QUOTE) {
    const q = stringEnd(bytes, i)
    return q === -1 ? -1 : q + 1
  }
  if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
    // Depth only, not which bracket: a mismatch is JSON.parse's to find (see the module comment).
    // One forward loop, strings inline (a backslash skips the next byte): on a 1 MiB body of
    // short strings, 1.8 ms against 2.5 ms with an indexOf per string.
    let depth = 0
    let inString = false
    const n = bytes.length
    for (; i < n; i++) {
      const c = bytes[i]!
      if (inString) {
        if (c === BACKSLASH) i++
        else if (c === QUOTE) inString = false
      } else if (c === QUOTE) inString = true
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (--depth === 0) return i + 1
      }
    }
    return -1
  }
  // A scalar (number, true, false, null): up to the next delimiter.
  const start = i
  while (i < bytes.length) {
    const c = bytes[i]!
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break
    if (c === QUOTE || c === OPEN_OBJECT || c === OPEN_ARRAY || c === COLON) return -1
    i++
  }
  return i === start || i === bytes.length ? -1 : i
}

const hasBackslash = (bytes: Uint8Array, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) if (bytes[i] === BACKSLASH) return true
  return false
}

/** The JSON string at `[start, end)` (quotes included), decoded strictly; undefined if it is not one. */
const decodeString = (bytes: Uint8Array, start: number, end: number): string | undefined => {
  const text = Json.decodeUtf8(bytes.subarray(start, end))
  if (Result.isFailure(text)) return undefined
  if (!hasBackslash(bytes, start + 1, end - 1)) return text.success.slice(1, -1)
  try {
    const value: unknown = JSON.parse(text.success)
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

/** Whether the key at `[start, end)` (quotes included) is the token field, escapes decoded. */
const isTokenKey = (bytes: Uint8Array, start: number, end: number): boolean => {
  const length = end - start - 2
  if (length === FIELD_BYTES.length) {
    let same = true
    for (let k = 0; k < length && same; k++) same = bytes[start + 1 + k] === FIELD_BYTES[k]
    if (same) return true
  }
  // Only an escaped spelling (`\u0077ebhooks...`) can still be the field, and it is short.
  if (length <= FIELD_BYTES.length || length > MAX_KEY_BYTES || !hasBackslash(bytes, start + 1, end - 1)) return false
  return decodeString(bytes, start, end) === TOKEN_FIELD
}

const startsValue = (b: number | undefined) =>
  b === OPEN_ARRAY || b === QUOTE || b === 0x2d || (b !== undefined && b >= 0x30 && b <= 0x39) || b === 0x74 || b === 0x66 || b === 0x6e

/**
 * Scans `bytes` for the top-level token member. `from` 0: from the start of the document (a
 * leading UTF-8 byte order mark is skipped, RFC 8259 section 8.1). Otherwise a `next` from an
 * earlier `Found`: the scan goes on after that member.
 */
export const scan = (bytes: Uint8Array, from = 0): Scan => {
  let i = from
  if (from === 0) {
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3
    i = skipSpace(bytes, i)
    if (i === bytes.length) return MALFORMED
    if (bytes[i] !== OPEN_OBJECT) return startsValue(bytes[i]) ? NOT_OBJECT : MALFORMED
    i = skipSpace(bytes, i + 1)
    if (bytes[i] === CLOSE_OBJECT) return ABSENT
  } else {
    // After a member: `,` and the next one, or the closing brace.
    i = skipSpace(bytes, i)
    if (bytes[i] === CLOSE_OBJECT) return ABSENT
    if (bytes[i] !== COMMA) return MALFORMED
    i = skipSpace(bytes, i + 1)
  }
  for (;;) {
    if (bytes[i] !== QUOTE) return MALFORMED
    const keyEnd = stringEnd(bytes, i)
    if (keyEnd === -1) return MALFORMED
    const isField = isTokenKey(bytes, i, keyEnd + 1)
    i = skipSpace(bytes, keyEnd + 1)
    if (bytes[i] !== COLON) return MALFORMED
    const start = skipSpace(bytes, i + 1)
    const end = valueEnd(bytes, start)
    if (end === -1) return MALFORMED
    if (isField) {
      const token = bytes[start] === QUOTE && end - start - 2 <= MAX_TOKEN_BYTES ? decodeString(bytes, start, end) : undefined
      return { _tag: "Found", valueStart: start, valueEnd: end, token, next: end }
    }
    i = skipSpace(bytes, end)
    const b = bytes[i]
    if (b === CLOSE_OBJECT) return ABSENT
    if (b !== COMMA) return MALFORMED
    i = skipSpace(bytes, i + 1)
  }
}

/** What the stored body carries in place of the token's value. */
export const REDACTED = `"[redacted]"`
const REDACTED_BYTES = new TextEncoder().encode(REDACTED)

/** The body with the value at `[valueStart, valueEnd)` replaced by {@link REDACTED}; every other byte kept. */
export const redact = (bytes: Uint8Array, valueStart: number, valueEnd: number): Uint8Array => {
  const out = new Uint8Array(bytes.length - (valueEnd - valueStart) + REDACTED_BYTES.length)
  out.set(bytes.subarray(0, valueStart), 0)
  out.set(REDACTED_BYTES, valueStart)
  out.set(bytes.subarray(valueEnd), valueStart + REDACTED_BYTES.length)
  return out
}
