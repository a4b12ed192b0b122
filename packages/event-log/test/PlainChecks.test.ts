/**
 * The direct checks of the hot paths must agree with their schemas: a check never accepts
 * what its schema refuses, and on plain objects it accepts exactly what the schema accepts
 * (so the schema only runs for unusual input and for the error message). The append path
 * checks NewRecords; the read path checks stored rows.
 */
import { assert, describe, it } from "@effect/vitest"
import { LogRecord } from "@ocs/event-log"
import { Exit, Result, Schema } from "effect"
import * as fc from "fast-check"
import { isPlainRecordRow, rowToRecord } from "../src/internal/sqliteLog.ts"

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

/** Up to two keys of `record` removed, set to undefined, or set to any value. */
const mutated = (base: fc.Arbitrary<Record<string, unknown>>, keys: ReadonlyArray<string>) =>
  fc.tuple(
    base,
    fc.array(fc.tuple(fc.constantFrom(...keys), fc.oneof(fc.constant({ remove: true }), anyValue.map((value) => ({ value })))), { maxLength: 2 })
  ).map(([record, changes]) => {
    const out = { ...record }
    for (const [key, change] of changes) {
      if ("remove" in change) delete out[key]
      else out[key] = change.value
    }
    return out
  })

const KEYS = ["id", "appId", "businessId", "source", "type", "receivedAt", "body", "dedupeKey", "meta", "entityId", "extra"] as const

const candidate = mutated(valid, KEYS)

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

/** A row as the records table returns it. */
const storedRow = fc.record({
  offset: fc.integer({ min: 1 }),
  id: fc.string(),
  tenant: fc.string(),
  appId: digits,
  businessId: fc.option(digits, { nil: null }),
  source: fc.constantFrom("webhook", "sync", "system"),
  type: fc.string(),
  receivedAt: fc.oneof(fc.maxSafeInteger(), fc.integer()),
  body: fc.string(),
  dedupeKey: fc.option(fc.string(), { nil: null }),
  meta: fc.constantFrom("{}", `{"a":1}`),
  entityId: fc.option(fc.string(), { nil: null })
}).map((r): Record<string, unknown> => ({ ...r }))

const ROW_KEYS = ["offset", "id", "tenant", "appId", "businessId", "source", "type", "receivedAt", "body", "dedupeKey", "meta", "entityId", "extra"]

describe("isPlainRecordRow (read path)", () => {
  it("agrees with the row schema: rowToRecord gives the same result with or without it", () => {
    assert.isTrue(isPlainRecordRow({ offset: 1, id: "x", tenant: "1:2", appId: "1", businessId: "2", source: "sync", type: "t", receivedAt: 5, body: "{}", dedupeKey: null, meta: "{}", entityId: null }))
    fc.assert(fc.property(mutated(storedRow, ROW_KEYS), (u) => {
      // Through the schema: the same row wrapped so that the direct check declines it.
      const viaSchema = rowToRecord(Object.assign(Object.create({ wrapped: true }) as object, u), "test")
      const direct = rowToRecord(u, "test")
      assert.strictEqual(Result.isSuccess(direct), Result.isSuccess(viaSchema))
      if (Result.isSuccess(direct) && Result.isSuccess(viaSchema)) assert.deepStrictEqual(direct.success, viaSchema.success)
    }), { numRuns: 20_000 })
  })
})
