/**
 * The batch text between the main thread and the writer thread: whatever rows go in come out
 * equal, code unit for code unit, and anything malformed is refused with a typed error.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { decodeBatch, encodeBatch, type Row, RowCodecError } from "../src/internal/rowCodec.ts"

// Any UTF-16 string, lone surrogates and the codec's own separators included.
const text = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom(":", ";", "~", "0", "1", "9", "-", "\uD800", "\uDC00", "ễ") }),
  fc.string({ unit: "grapheme" })
)

const row: fc.Arbitrary<Row> = fc.record({
  id: text,
  idGiven: fc.boolean(),
  tenant: text,
  appId: text,
  businessId: fc.option(text, { nil: null }),
  source: text,
  type: text,
  // `+ 0` turns -0 into 0: a millisecond count has no sign of zero (JSON did not keep one either).
  receivedAt: fc.maxSafeInteger().chain((n) => fc.constantFrom(n, -n, 0)).map((n) => n + 0),
  body: text,
  dedupeKey: fc.option(text, { nil: null }),
  meta: text,
  entityId: fc.option(text, { nil: null })
})

const batch = fc.array(fc.array(row, { maxLength: 5 }), { maxLength: 5 })

describe("row codec (main thread -> writer thread)", () => {
  it("decodes what it encoded, for any rows", () => {
    fc.assert(fc.property(batch, (groups) => {
      assert.deepStrictEqual(decodeBatch(encodeBatch(groups)), groups)
    }), { numRuns: 2000 })
  })

  it("refuses truncated or extended text with a RowCodecError", () => {
    fc.assert(fc.property(batch.filter((g) => g.some((rows) => rows.length > 0)), fc.nat(), (groups, cut) => {
      const encoded = encodeBatch(groups)
      const truncated = encoded.slice(0, cut % encoded.length)
      assert.throws(() => decodeBatch(truncated), RowCodecError)
      assert.throws(() => decodeBatch(`${encoded}x`), RowCodecError)
    }), { numRuns: 500 })
  })

  it("refuses lengths and numbers that are not digits", () => {
    for (const bad of ["", "x;", "1;1;", "1;1;3:abc2", "1;1;99999999999999999:", "-1;"]) {
      assert.throws(() => decodeBatch(bad), RowCodecError, undefined, JSON.stringify(bad))
    }
  })
})
