/**
 * Checks on a delivery's envelope once it is parsed: an empty body told apart from bad JSON, and
 * the businessId judged on its exact text.
 */
import { Json } from "@ocs/protocol"
import { Result } from "effect"

const INTEGER = /^(?:0|[1-9][0-9]*)$/

/** Nothing but whitespace (or nothing at all), a byte order mark aside. */
export const blank = (bytes: Uint8Array): boolean => {
  for (let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return false
  }
  return true
}

const short = (message: string): string => (message.length > 300 ? `${message.slice(0, 300)}...` : message)

/**
 * docs/api-catalogue.md, Envelope: businessId is a bigint. Judged on its exact text so that no rounding can
 * turn `9007199254740993.5` or `1e3` into an id: only a non-negative integer literal (or a
 * string of digits) is accepted, and its canonical digits are kept.
 */
export const businessIdOf = (text: string, value: Record<string, unknown>): Result.Result<string | null, string> => {
  const v = value["businessId"]
  if (v === undefined || v === null) return Result.succeed(null)
  if (typeof v === "string") {
    return INTEGER.test(v)
      ? Result.succeed(BigInt(v).toString())
      : Result.fail("businessId must be a non-negative integer")
  }
  const literal = Json.extract(text, ["businessId"])
  return literal !== undefined && INTEGER.test(literal)
    ? Result.succeed(BigInt(literal).toString())
    : Result.fail(`businessId must be a non-negative integer, got ${short(literal ?? typeof v)}`)
}
