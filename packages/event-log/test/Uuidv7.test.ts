/**
 * The ids the log gives records without one: UUIDv7 text (RFC 9562), held to a reference
 * formatting of the same fields, unique, and sorted by time.
 */
import { assert, describe, it } from "@effect/vitest"
import { LogRecord } from "@ocs/event-log"
import * as fc from "fast-check"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("LogRecord.uuidv7", () => {
  it("is a version 7, variant 10 UUID whose first 48 bits are the time in ms", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), (now) => {
      const id = LogRecord.uuidv7(now)
      assert.match(id, UUID)
      const hex = id.replaceAll("-", "")
      assert.strictEqual(Number.parseInt(hex.slice(0, 12), 16), now)
      assert.strictEqual(id.length, 36)
    }), { numRuns: 20_000 })
  })

  it("keeps only the low 48 bits of the time and never goes below zero", () => {
    assert.strictEqual(LogRecord.uuidv7(2 ** 48 + 5).slice(0, 13), "00000000-0005")
    assert.strictEqual(LogRecord.uuidv7(-7).slice(0, 13), "00000000-0000")
    assert.strictEqual(LogRecord.uuidv7(1.9).slice(0, 13), "00000000-0001")
  })

  it("gives distinct ids within one millisecond (the random bits) and orders ids by time", () => {
    const now = Date.now()
    const same = Array.from({ length: 50_000 }, () => LogRecord.uuidv7(now))
    assert.strictEqual(new Set(same).size, same.length)
    // Returned strings are independent of the buffer they were written in.
    assert.isTrue(same.every((id) => id.startsWith(same[0]!.slice(0, 13))))
    const later = LogRecord.uuidv7(now + 1)
    assert.isTrue(same.every((id) => id < later))
  })
})
