import { assert, describe, it } from "@effect/vitest"
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect, Fiber, Option, Stream } from "effect"
import * as fc from "fast-check"
import * as NodePath from "node:path"
import { APP, tempDir, webhook } from "./helpers.ts"

const layer = (filename: string, extra: Partial<Parameters<typeof SqliteEventLog.layer>[0]> = {}) =>
  SqliteEventLog.layer({ filename, ...extra })

const readAll = (tenant: Parameters<EventLog.EventLogService["read"]>[0]["tenant"], more: object = {}) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    return yield* Stream.runCollect(log.read({ tenant, ...more }))
  })

/** Opens the same file through the shared wrapper (a second connection; WAL allows it). */
const withRaw = <A>(filename: string, f: (db: SqliteDatabase.Handle) => Effect.Effect<A, SqliteDatabase.SqliteError>) =>
  Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename }), f))

describe("SqliteEventLog", () => {
  it.live("appends and reads back per tenant, in order, with filters", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const results = yield* log.append([
        webhook("1", `{"n":1}`),
        webhook("2", `{"n":2}`, { type: "productUpdate" }),
        webhook("1", `{"n":3}`, { type: "productUpdate", meta: { remoteAddress: "10.0.0.1", big: 12345678901234567890n } }),
        webhook(null, `{"event":"webhooksEnabled"}`, { type: "webhooksEnabled", source: "system" })
      ])
      assert.deepStrictEqual(results.map((r) => r._tag), ["Appended", "Appended", "Appended", "Appended"])
      const offsets = results.map((r) => r.offset)
      assert.deepStrictEqual(offsets, [...offsets].sort((a, b) => a - b))

      const one = yield* readAll(`${APP}:1`)
      assert.deepStrictEqual(one.map((r) => r.body), [`{"n":1}`, `{"n":3}`])
      assert.strictEqual(one[1]!.meta["big"], 12345678901234567890n)
      assert.strictEqual(one[0]!.id, results[0]!.id)
      assert.match(one[0]!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)

      const app = yield* readAll(`${APP}:`)
      assert.deepStrictEqual(app.map((r) => [r.type, r.businessId]), [["webhooksEnabled", null]])

      const all = yield* readAll("all", { types: ["productUpdate"] })
      assert.deepStrictEqual(all.map((r) => r.body), [`{"n":2}`, `{"n":3}`])

      // Every filter shape: a tenant with types, several types, no type at all.
      const tenantTyped = yield* readAll(`${APP}:1`, { types: ["productUpdate"] })
      assert.deepStrictEqual(tenantTyped.map((r) => r.body), [`{"n":3}`])
      const twoTypes = yield* readAll("all", { types: ["productUpdate", "webhooksEnabled"] })
      assert.deepStrictEqual(twoTypes.map((r) => r.offset), offsets.slice(1))
      assert.deepStrictEqual(yield* readAll("all", { types: [] }), [])

      const until = yield* readAll("all", { untilOffset: offsets[1] })
      assert.strictEqual(until.length, 2)
      const from = yield* readAll("all", { from: offsets[2], pageSize: 1 })
      assert.deepStrictEqual(from.map((r) => r.offset), offsets.slice(2))
    }).pipe(Effect.provide(layer(file)))
  })

  it.live("keeps every body byte for byte (big numbers, unicode, odd whitespace)", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const bodies = [
      `{"id":123456789012345678901234567890,"price":1.10,"e":1E+400,"neg":-0}`,
      ` \t\r\n{ "name" : "Phở 🍜 ﷽ \\u0000 \u2028\u2029" ,"x":[ ] }\n\n`,
      `{"a":"\u0000 nul inside","b":"ｆｕｌｌ　ｗｉｄｔｈ"}`,
      "",
      "\uFEFF{\"bom\":true}"
    ]
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      yield* log.append(bodies.map((body) => webhook("7", body)))
      const generated = fc.sample(fc.string({ unit: "grapheme", maxLength: 200 }), { seed: 42, numRuns: 200 })
      yield* log.append(generated.map((body) => webhook("8", body)))
      const seven = yield* readAll(`${APP}:7`)
      assert.deepStrictEqual(seven.map((r) => Buffer.from(r.body, "utf8").toString("hex")), bodies.map((b) => Buffer.from(b, "utf8").toString("hex")))
      const eight = yield* readAll(`${APP}:8`, { pageSize: 17 })
      assert.deepStrictEqual(eight.map((r) => r.body), generated)
    }).pipe(Effect.provide(layer(file)))
  })

  it.live("keeps each business in order under concurrent appenders", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      yield* Effect.forEach(["1", "2", "3", "4"], (business) =>
        Effect.forEach(Array.from({ length: 40 }, (_, i) => i), (i) =>
          log.append([webhook(business, `{"seq":${i}}`)]), { discard: true }), { concurrency: "unbounded", discard: true })
      for (const business of ["1", "2", "3", "4"]) {
        const records = yield* readAll(`${APP}:${business}`, { pageSize: 7 })
        assert.deepStrictEqual(records.map((r) => r.body), Array.from({ length: 40 }, (_, i) => `{"seq":${i}}`))
      }
    }).pipe(Effect.provide(layer(file)))
  })

  it.live("group commit: many concurrent appends share few transactions", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const results = yield* Effect.forEach(Array.from({ length: 500 }, (_, i) => i), (i) =>
        log.append([webhook(String(i % 10), `{"i":${i}}`)]), { concurrency: "unbounded" })
      assert.strictEqual(new Set(results.map((r) => r[0]!.offset)).size, 500)
      const commits = yield* withRaw(file, (db) =>
        db.use("count", (_, c) => c.prepare(`SELECT count(*) AS n, sum(appended) AS appended FROM commits`).get() as { n: number; appended: number }))
      assert.strictEqual(commits.appended, 500)
      assert.isAtMost(commits.n, 10, `500 appends took ${commits.n} transactions`)
    }).pipe(Effect.provide(layer(file)))
  })

  it.live("dedupes a dedupeKey per tenant within the window and records the decision", () => {
    const file = NodePath.join(tempDir(), "log.db")
    const hour = 60 * 60 * 1000
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const t0 = 1_700_000_000_000
      const [first] = yield* log.append([webhook("1", `{"v":1}`, { dedupeKey: "k", receivedAt: t0 })])
      const again = yield* log.append([
        webhook("1", `{"v":1}`, { dedupeKey: "k", receivedAt: t0 + hour - 1 }),
        webhook("2", `{"v":1}`, { dedupeKey: "k", receivedAt: t0 + 5 }),
        webhook("2", `{"v":1}`, { dedupeKey: "k", receivedAt: t0 + 6 })
      ])
      assert.deepStrictEqual(again.map((r) => r._tag), ["Duplicate", "Appended", "Duplicate"])
      assert.strictEqual(again[0]!.offset, first!.offset)
      assert.strictEqual(again[0]!.id, first!.id)
      assert.strictEqual(again[2]!.offset, again[1]!.offset)
      const later = yield* log.append([webhook("1", `{"v":1}`, { dedupeKey: "k", receivedAt: t0 + hour + 1 })])
      assert.strictEqual(later[0]!._tag, "Appended")
      const byId = yield* log.append([webhook("3", `{}`, { id: first!.id })])
      assert.deepStrictEqual(byId[0], { _tag: "Duplicate", offset: first!.offset, id: first!.id })

      assert.strictEqual((yield* readAll(`${APP}:1`)).length, 2)
      const decisions = yield* withRaw(file, (db) =>
        db.use("decisions", (_, c) => c.prepare(`SELECT reason, tenant, original_offset AS original FROM dedupe_decisions ORDER BY seq`).all()))
      assert.deepStrictEqual(decisions, [
        { reason: "dedupeKey", tenant: `${APP}:1`, original: first!.offset },
        { reason: "dedupeKey", tenant: `${APP}:2`, original: again[1]!.offset },
        { reason: "id", tenant: `${APP}:3`, original: first!.offset }
      ])
    }).pipe(Effect.provide(layer(file, { dedupeWindowMillis: hour })))
  })

  it.live("refuses invalid records with a typed error and stores nothing", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const error = yield* log.append([webhook("1", "{}"), webhook("1", "{}", { appId: "12a" })]).pipe(Effect.flip)
      assert.strictEqual(error._tag, "InvalidRecord")
      assert.strictEqual((yield* readAll("all")).length, 0)
    }).pipe(Effect.provide(layer(file)))
  })

  it.live("decodes rows read from disk and reports a damaged one", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      yield* log.append([webhook("1", "{}")])
      yield* withRaw(file, (db) => db.use("damage", (_, c) => c.prepare(`UPDATE records SET meta = '[1]'`).run()))
      const error = yield* readAll("all").pipe(Effect.flip)
      assert.strictEqual(error._tag, "RecordDecodeError")
    }).pipe(Effect.provide(layer(file)))
  })

  it.live("subscribe follows new appends and resumes from a committed checkpoint", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        yield* log.append([webhook("1", `{"n":1}`), webhook("2", `{"n":2}`)])
        const fiber = yield* log.subscribe("projector", { tenant: "all" }).pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
        yield* Effect.yieldNow
        yield* log.append([webhook("1", `{"n":3}`)])
        const got = yield* Fiber.join(fiber)
        assert.deepStrictEqual(got.map((d) => d.record.body), [`{"n":1}`, `{"n":2}`, `{"n":3}`])
        yield* log.commit("projector", got[1]!.checkpoint)
        const tenantOnly = yield* log.subscribe("other", { tenant: `${APP}:1` }).pipe(Stream.take(2), Stream.runCollect)
        assert.deepStrictEqual(tenantOnly.map((d) => d.record.body), [`{"n":1}`, `{"n":3}`])
      }).pipe(Effect.provide(layer(file)))

      // A restart: a new layer over the same file.
      yield* Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        assert.isTrue(Option.isSome(yield* log.checkpoint("projector")))
        yield* log.append([webhook("2", `{"n":4}`)])
        const resumed = yield* log.subscribe("projector", { tenant: "all" }).pipe(Stream.take(2), Stream.runCollect)
        assert.deepStrictEqual(resumed.map((d) => d.record.body), [`{"n":3}`, `{"n":4}`])
        const bad = yield* log.subscribe("x", { tenant: "all", from: "kafka:{}" }).pipe(Stream.runCollect, Effect.flip)
        assert.strictEqual(bad._tag, "InvalidCheckpoint")
      }).pipe(Effect.provide(layer(file)))
    })
  })
})
