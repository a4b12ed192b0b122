/**
 * The one check of each record shape: what `append` accepts (`LogRecord.checkNewRecord`) and
 * what a stored row must be to decode (`SqliteEventLog.rowToRecord`). Each accepts every valid
 * value and rejects a malformed field with a message naming that field.
 */
import { assert, describe, it } from "@effect/vitest"
import { DirectAppend, EventLog, LogRecord, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect, Exit, Result, Stream } from "effect"
import * as fc from "fast-check"
import * as NodePath from "node:path"
import { recordToRow } from "../src/internal/recordRow.ts"
import { tempDir, webhook } from "./helpers.ts"

const digits = fc.stringMatching(/^[0-9]{1,25}$/)
const optionalField = <A>(value: fc.Arbitrary<A>) => fc.option(value, { nil: undefined })
const withoutUndefined = (r: Record<string, unknown>) => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v
  return out
}

/** A valid NewRecord, each optional key present or absent. */
const validNew = fc.record({
  id: optionalField(fc.uuid().map((u) => u.toLowerCase())),
  appId: digits,
  businessId: fc.option(digits, { nil: null }),
  source: fc.constantFrom("webhook", "sync", "system"),
  type: fc.string({ minLength: 1 }),
  receivedAt: optionalField(fc.oneof(fc.maxSafeInteger(), fc.integer())),
  body: fc.string(),
  dedupeKey: optionalField(fc.option(fc.string(), { nil: null })),
  meta: optionalField(fc.dictionary(fc.string(), fc.jsonValue())),
  entityId: optionalField(fc.option(fc.string(), { nil: null })),
  extra: optionalField(fc.anything())
}).map(withoutUndefined)

/** Values each NewRecord field must refuse (`undefined`: present as undefined, or absent when required). */
const badNew: Record<string, ReadonlyArray<unknown>> = {
  id: ["", "not-a-uuid", "0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B", "0190a1b2c3d47e5f8a9b0c1d2e3f4a5b", 1, null, undefined],
  appId: ["", "12a", " 1", "1\n", "-1", "１２", "1.5", 12, 12n, null, undefined],
  businessId: ["", "x", "-3", 42, undefined],
  source: ["", "WEBHOOK", "Sync", "push", null, undefined],
  type: ["", 1, null, undefined],
  receivedAt: [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, "5", 5n, null, undefined],
  body: [1, null, undefined, { text: "x" }, Buffer.from("{}")],
  dedupeKey: [1, false, {}, undefined],
  meta: [null, [], "{}", 1, new Map([["a", 1]]), new Date(0), undefined],
  entityId: [1, 7n, {}, undefined]
}
const NEW_KEYS = Object.keys(badNew)

describe("LogRecord.checkNewRecord", () => {
  it("accepts every valid record, with optional keys present or absent and other keys ignored", () => {
    fc.assert(fc.property(validNew, (record) => {
      assert.strictEqual(LogRecord.checkNewRecord(record), undefined)
    }), { numRuns: 5_000 })
    const minimal = { appId: "1001", businessId: null, source: "sync", type: "x", body: "" }
    assert.strictEqual(LogRecord.checkNewRecord(minimal), undefined)
    // Any object is read by its fields, a class instance as well.
    class Custom {
      appId = "1001"
      businessId = "42"
      source = "webhook"
      type = "orderAdd"
      body = "{}"
    }
    assert.strictEqual(LogRecord.checkNewRecord(new Custom()), undefined)
  })

  it("rejects each malformed field with a message naming it", () => {
    const base = { appId: "1001", businessId: "42", source: "webhook", type: "orderAdd", body: "{}" }
    for (const key of NEW_KEYS) {
      for (const value of badNew[key]!) {
        const problem = LogRecord.checkNewRecord({ ...base, [key]: value })
        assert.isString(problem, `${key}: ${String(value)} was accepted`)
        assert.include(problem, `field "${key}"`)
      }
    }
    for (const key of ["appId", "businessId", "source", "type", "body"]) {
      const { [key]: _, ...rest } = base as Record<string, unknown>
      assert.include(LogRecord.checkNewRecord(rest), `field "${key}"`, `${key} absent was accepted`)
    }
    assert.strictEqual(LogRecord.checkNewRecord({ ...base, businessId: 42 }), `field "businessId" must be a string of digits or null, got 42`)
    for (const notAnObject of [null, undefined, "x", 1, [base]]) assert.include(LogRecord.checkNewRecord(notAnObject), "expected an object")
    // A long value is shortened in the message: a body never lands whole in a log line.
    assert.isBelow(LogRecord.checkNewRecord({ ...base, appId: "x".repeat(10_000) })!.length, 200)
  })

  it("names the broken field of any valid record with one field made invalid", () => {
    const broken = fc.tuple(validNew, fc.constantFrom(...NEW_KEYS)).chain(([record, key]) =>
      fc.constantFrom(...badNew[key]!).map((value) => ({ record: { ...record, [key]: value }, key }))
    )
    fc.assert(fc.property(broken, ({ record, key }) => {
      const problem = LogRecord.checkNewRecord(record)
      assert.isString(problem)
      assert.include(problem, `field "${key}"`)
    }), { numRuns: 5_000 })
  })

  it.live("append refuses an invalid record with InvalidRecord naming the record and the field; direct appends too", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const error = yield* log.append([webhook("1", "{}"), webhook("1", "{}", { source: "push" as LogRecord.Source })]).pipe(Effect.flip)
      assert.strictEqual(error._tag, "InvalidRecord")
      if (error._tag === "InvalidRecord") {
        assert.strictEqual(error.index, 1)
        assert.strictEqual(error.message, `record 1: field "source" must be "webhook", "sync" or "system", got "push"`)
      }
      const direct = yield* DirectAppend.DirectAppend
      const exit = yield* Effect.callback<Exit.Exit<ReadonlyArray<LogRecord.AppendResult>, unknown>>((resume) =>
        direct.append([webhook("1", "{}", { meta: new Map() as unknown as LogRecord.Meta })], (e) => resume(Effect.succeed(e)))
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.match(String(exit), /field "meta" must be a plain object/)
      assert.strictEqual((yield* Stream.runCollect(log.read({ tenant: "all" }))).length, 0)
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: file })))
  })
})

/** A stored row as the records table returns it (selected with `recordColumns`). */
const validRow = fc.record({
  offset: fc.integer({ min: 1 }),
  id: fc.string(),
  tenant: optionalField(fc.string()),
  appId: digits,
  businessId: fc.option(digits, { nil: null }),
  source: fc.constantFrom("webhook", "sync", "system"),
  type: fc.string(),
  receivedAt: fc.oneof(fc.maxSafeInteger(), fc.integer()),
  body: fc.string(),
  dedupeKey: fc.option(fc.string(), { nil: null }),
  meta: fc.constantFrom("{}", `{"a":1}`, `{"big":12345678901234567890}`),
  entityId: fc.option(fc.string(), { nil: null })
}).map(withoutUndefined)

const badRow: Record<string, ReadonlyArray<unknown>> = {
  offset: [1.5, "1", null, undefined],
  id: [1, null, undefined],
  tenant: [1, null],
  appId: ["", "1a", 1, null, undefined],
  businessId: ["b", 2, undefined],
  source: ["Webhook", null, undefined],
  type: [1, null, undefined],
  receivedAt: [0.5, "0", null, undefined],
  body: [Buffer.from("{}"), null, undefined],
  dedupeKey: [1, undefined],
  meta: [{}, null, undefined],
  entityId: [1, undefined]
}

describe("stored rows (SqliteEventLog.rowToRecord)", () => {
  it("decodes every valid row into the record it holds", () => {
    fc.assert(fc.property(validRow, (row) => {
      const decoded = SqliteEventLog.rowToRecord(row, "test")
      assert.isTrue(Result.isSuccess(decoded))
      if (Result.isFailure(decoded)) return
      const { tenant: _, meta, ...fields } = row
      assert.deepStrictEqual({ ...decoded.success, meta: undefined }, { ...fields, meta: undefined })
      assert.isObject(decoded.success.meta)
      if (meta === `{"a":1}`) assert.deepStrictEqual(decoded.success.meta, { a: 1 })
      if (meta === `{"big":12345678901234567890}`) assert.strictEqual(decoded.success.meta["big"], 12345678901234567890n)
      // Back to the stored shape (a Kafka message's value) and decoded again: the same record.
      const again = SqliteEventLog.rowToRecord(recordToRow(decoded.success), "test")
      assert.deepStrictEqual(again, decoded)
    }), { numRuns: 5_000 })
  })

  it("rejects each malformed field with RecordDecodeError naming it", () => {
    const base = { offset: 1, id: "x", tenant: "1:2", appId: "1", businessId: "2", source: "sync", type: "t", receivedAt: 5, body: "{}", dedupeKey: null, meta: "{}", entityId: null }
    for (const [key, values] of Object.entries(badRow)) {
      for (const value of values) {
        const decoded = SqliteEventLog.rowToRecord({ ...base, [key]: value }, "here")
        assert.isTrue(Result.isFailure(decoded), `${key}: ${String(value)} was accepted`)
        if (Result.isSuccess(decoded)) continue
        assert.strictEqual(decoded.failure._tag, "RecordDecodeError")
        assert.strictEqual(decoded.failure.where, "here")
        assert.include(decoded.failure.message, `field "${key}"`)
      }
    }
    for (const text of ["[1]", "null", "1", "{", `"x"`]) {
      const decoded = SqliteEventLog.rowToRecord({ ...base, meta: text }, "here")
      assert.isTrue(Result.isFailure(decoded) && decoded.failure.message.includes(`field "meta" is not a JSON object`), text)
    }
  })

  it.live("recordColumns selects what rowToRecord decodes, from a real log file", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      yield* log.append([
        webhook("1", `{"n":1}`, { meta: { entityId: 77n }, dedupeKey: "k" }),
        webhook(null, "{}", { type: "webhooksEnabled", entityId: "e" })
      ])
      const viaLog = yield* Stream.runCollect(log.read({ tenant: "all" }))
      const rows = yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: file }), (db) =>
        db.use("rows", (_, c) => c.prepare(`SELECT ${SqliteEventLog.recordColumns} FROM records ORDER BY "offset"`).all())))
      const decoded = rows.map((row) => Result.getOrThrow(SqliteEventLog.rowToRecord(row, file)))
      assert.deepStrictEqual(decoded, viaLog)
      assert.deepStrictEqual(decoded.map((r) => r.entityId), ["77", "e"])
      assert.deepStrictEqual(Object.keys(rows[0] as object).sort(), Object.keys(decoded[0]!).sort())
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: file })))
  })
})
