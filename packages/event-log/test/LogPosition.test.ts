/**
 * Where the log stands: `head`, `lag` and `relayBacklog` of the port, and the same answers from
 * a read-only `LogFile` beside the writer (the replay tool's and the server gauges' reader).
 */
import { assert, describe, it } from "@effect/vitest"
import { Checkpoints, EventLog, EventLogError, LogFile, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect, Exit, Option, Stream } from "effect"
import * as NodePath from "node:path"
import { APP, tempDir, webhook } from "./helpers.ts"

describe("EventLog position", () => {
  it.live("head per log and per tenant, lag from a checkpoint, no relay backlog in SQLite mode", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      assert.strictEqual(yield* log.head(), 0)
      assert.deepStrictEqual(yield* log.lag(Checkpoints.sqlite(0)), Option.some({ records: 0, seconds: 0 }))
      const appended = yield* log.append([webhook("1", `{"n":1}`), webhook("2", `{"n":2}`), webhook("1", `{"n":3}`), webhook("2", `{"n":4}`)])
      const offsets = appended.map((r) => r.offset)
      assert.strictEqual(yield* log.head(), offsets[3])
      assert.strictEqual(yield* log.head(`${APP}:1`), offsets[2])
      assert.strictEqual(yield* log.head(`${APP}:3`), 0)

      const all = yield* log.lag(Checkpoints.sqlite(offsets[0]!))
      assert.strictEqual(Option.getOrThrow(all).records, 3)
      const one = yield* log.lag(Checkpoints.sqlite(offsets[0]!), `${APP}:1`)
      assert.strictEqual(Option.getOrThrow(one).records, 1)
      const caughtUp = yield* log.lag(Checkpoints.sqlite(offsets[3]!))
      assert.deepStrictEqual(caughtUp, Option.some({ records: 0, seconds: 0 }))

      const invalid = yield* Effect.exit(log.lag("kafka-or-garbage"))
      assert.isTrue(Exit.isFailure(invalid))
      assert.deepStrictEqual(yield* log.relayBacklog, Option.none())
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: file })))
  })

  it.live("a read-only LogFile answers head, lag, filtered records, counts and stats beside the writer", () => {
    const file = NodePath.join(tempDir(), "log.db")
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const appended = yield* log.append([
        webhook("1", `{"n":1}`),
        webhook("2", `{"n":2}`, { type: "productUpdate", entityId: "p-7" }),
        webhook("1", `{"n":3}`, { dedupeKey: "k" }),
        webhook("1", `{"n":3}`, { dedupeKey: "k" }),
        webhook(null, `{"operation":"product.list"}`, { source: "system", type: "transport.LockTaken" })
      ])
      assert.deepStrictEqual(appended.map((r) => r._tag), ["Appended", "Appended", "Appended", "Duplicate", "Appended"])
      const reader = yield* LogFile.open(file)
      assert.strictEqual(yield* reader.head(), yield* log.head())
      assert.strictEqual(yield* reader.head(`${APP}:1`), appended[2]!.offset)
      assert.strictEqual((yield* reader.lagAfter(appended[0]!.offset)).records, 3)

      const ones = yield* Stream.runCollect(reader.records({ tenant: `${APP}:1`, pageSize: 1 }))
      assert.deepStrictEqual(ones.map((r) => r.body), [`{"n":1}`, `{"n":3}`])
      const mentions = yield* Stream.runCollect(reader.records({ mentions: "p-7" }))
      assert.deepStrictEqual(mentions.map((r) => r.offset), [appended[1]!.offset])
      assert.strictEqual(yield* reader.count({ sources: ["webhook"] }), 3)
      assert.strictEqual(yield* reader.count({ untilOffset: appended[1]!.offset }), 2)

      const stats = yield* reader.stats({ operationsOf: "transport.LockTaken" })
      assert.deepStrictEqual(stats.byTenant.map((t) => [t.tenant, t.records]), [[`${APP}:`, 1], [`${APP}:1`, 2], [`${APP}:2`, 1]])
      assert.deepStrictEqual(stats.duplicates?.map((d) => [d.tenant, d.reason, d.count]), [[`${APP}:1`, "dedupeKey", 1]])
      assert.deepStrictEqual(stats.operations.map((o) => [o.tenant, o.operation, o.count]), [[`${APP}:`, "product.list", 1]])

      // An SQLite-mode file has no relay cursor: read as a Kafka outbox, nothing was relayed.
      assert.strictEqual((yield* reader.relayBacklog("events")).records, 4)
    }).pipe(Effect.scoped, Effect.provide(SqliteEventLog.layer({ filename: file })))
  })

  it.live("a file without the records table is refused as not an event log", () => {
    const file = NodePath.join(tempDir(), "other.db")
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: file }), (db) => db.use("create", (_, c) => c.exec("CREATE TABLE t (x)"))))
      const opened = yield* Effect.exit(Effect.scoped(LogFile.open(file)))
      assert.isTrue(Exit.isFailure(opened))
      if (Exit.isFailure(opened)) {
        const error = opened.cause.reasons[0]
        assert.isTrue(error !== undefined && error._tag === "Fail" && error.error instanceof EventLogError.NotAnEventLogFile)
      }
    })
  })
})
