/**
 * The append path's fast check of a NewRecord must agree with the schema: it never accepts
 * what the schema refuses, and on plain objects it accepts exactly what the schema accepts
 * (so the schema only runs for unusual input and for the error message).
 */
import { assert, describe, it } from "@effect/vitest"
import { LogRecord } from "@ocs/event-log"
import { Exit, Schema } from "effect"
import * as fc from "fast-check"

const decode = Schema.decodeUnknownExit(LogRecord.NewRecord)

const anyValue = fc.oneof(
  fc.string(),
  fc.stringMatching(/^[0-9]{1,25}$/),
  fc.constantFrom("", "12a", " 1", "1\n", "-1", "0", "１２", "WEBHOOK", "Sync"),
  fc.integer(),
  fc.double(),
  fc.constantFrom(2 ** 53, 2 ** 53 + 2, -0, 1e21, 0.5, Number.NaN, Number.POSITIVE_INFINITY),
  fc.bigInt(),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.constant([]),
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.dictionary(fc.string(), fc.jsonValue())
)

const digits = fc.stringMatching(/^[0-9]{1,25}$/)
const optionalField = <A>(value: fc.Arbitrary<A>) => fc.option(value, { nil: undefined })

/** A record the schema accepts (optional keys present or absent)... */
const valid = fc.record({
  id: optionalField(fc.uuid().map((u) => u.toLowerCase())),
  appId: digits,
  businessId: fc.option(digits, { nil: null }),
  source: fc.constantFrom("webhook", "sync", "system"),
  type: fc.string({ minLength: 1 }),
  receivedAt: optionalField(fc.oneof(fc.maxSafeInteger(), fc.integer())),
  body: fc.string(),
  dedupeKey: optionalField(fc.option(fc.string(), { nil: null })),
  meta: optionalField(fc.dictionary(fc.string(), fc.jsonValue())),
  entityId: optionalField(fc.option(fc.string(), { nil: null }))
}).map((r) => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v
  return out
})

const KEYS = ["id", "appId", "businessId", "source", "type", "receivedAt", "body", "dedupeKey", "meta", "entityId", "extra"] as const

/** ...then up to two keys removed, set to undefined, or set to any value. */
const candidate = fc.tuple(
  valid,
  fc.array(fc.tuple(fc.constantFrom(...KEYS), fc.oneof(fc.constant({ remove: true }), anyValue.map((value) => ({ value })))), { maxLength: 2 })
).map(([record, changes]) => {
  const out = { ...record }
  for (const [key, change] of changes) {
    if (typeof change === "object" && change !== null && "remove" in change) delete out[key]
    else out[key] = (change as { value: unknown }).value
  }
  return out
})

const isPlain = (u: unknown) => typeof u === "object" && u !== null && !Array.isArray(u) && Object.getPrototypeOf(u) === Object.prototype

describe("LogRecord.isPlainNewRecord", () => {
  it("accepts exactly what the schema accepts, on plain objects with a plain or no meta", () => {
    fc.assert(fc.property(candidate, (u) => {
      const fast = LogRecord.isPlainNewRecord(u)
      const schema = Exit.isSuccess(decode(u))
      if (fast) assert.isTrue(schema, "the fast check accepted what the schema refuses")
      if (!("meta" in u) || isPlain(u["meta"])) assert.strictEqual(fast, schema)
    }), { numRuns: 20_000 })
  })

  it("valid records pass; unusual ones go to the schema", () => {
    const record = { appId: "1001", businessId: "42", source: "webhook", type: "orderAdd", body: "{}" }
    assert.isTrue(LogRecord.isPlainNewRecord(record))
    assert.isTrue(LogRecord.isPlainNewRecord({ ...record, id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", receivedAt: 1, dedupeKey: null, meta: {}, entityId: "7" }))
    class Custom {
      appId = "1001"
      businessId = null
      source = "sync"
      type = "x"
      body = ""
    }
    assert.isFalse(LogRecord.isPlainNewRecord(new Custom()))
    assert.isTrue(Exit.isSuccess(decode(new Custom())))
    assert.isFalse(LogRecord.isPlainNewRecord({ ...record, meta: new Map() }))
  })
})
