/**
 * The Postgres store follows a log as the SQLite read models do: `run` subscribes from the
 * stored checkpoint, `catchUp` resumes after a restart, and the copy then equals the SQLite
 * file's projection of the same log (same digest).
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { PostgresStore } from "@ocs/read-models/postgres"
import { Effect, Fiber, Option, Stream } from "effect"
import { append, files, mixedRecords } from "../helpers.ts"

const database = databaseOfFile()

describe.skipIf(postgresUnavailable())("the Postgres store follows the log", () => {
  it.live("run from the checkpoint, then catchUp after a restart: equal to the SQLite projection", () => {
    const f = files()
    return Effect.gen(function*() {
      const url = database()
      const offsets = yield* append(mixedRecords(600, 21))
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* PostgresStore.make({ url, schema: "followed", pool: 2 })
        const fiber = yield* store.run("read-models", { batchSize: 250, maxBatchWaitMillis: 50 })
        const wanted = `sqlite:${Math.max(...offsets.filter((a) => a._tag === "Appended").map((a) => a.offset))}`
        for (let i = 0; i < 600; i++) {
          if (Option.getOrUndefined(yield* store.checkpoint("read-models")) === wanted) break
          yield* Effect.sleep("50 millis")
        }
        assert.strictEqual(Option.getOrUndefined(yield* store.checkpoint("read-models")), wanted)
        yield* Fiber.interrupt(fiber)
      }))
      // more records while the store is closed: a new store resumes from the checkpoint
      const more = yield* append(mixedRecords(400, 22))
      const store = yield* PostgresStore.make({ url, schema: "followed", pool: 2 })
      assert.strictEqual(yield* store.catchUp(), more.filter((a) => a._tag === "Appended").length)
      assert.strictEqual(yield* store.catchUp(), 0)
      const rm = yield* ReadModels.make({ filename: f.rm, detectChanges: false })
      yield* rm.catchUp()
      assert.deepStrictEqual((yield* store.digest).tables, (yield* rm.digest()).tables)
    }).pipe(Effect.scoped, Effect.provide(SqliteEventLog.layer({ filename: f.log, pollIntervalMillis: 50 })))
  }, 120_000)

  it.live("a fenced batch commits only over the checkpoint it started from; a stale owner writes nothing", () => {
    const f = files()
    return Effect.gen(function*() {
      const url = database()
      yield* append(mixedRecords(300, 23))
      const log = yield* EventLog.EventLog
      const records = yield* Stream.runCollect(log.read({ tenant: "all" }))
      const first = records.slice(0, 150)
      const second = records.slice(150)
      const store = yield* PostgresStore.make({ url, schema: "fenced", pool: 2 })
      const row = PostgresStore.partitionConsumer("read-models-postgres", 0)
      const rows = Effect.map(store.query<{ n: number }>("SELECT count(*)::int AS n FROM applied_records"), (r) => r[0]!.n)
      // The owner commits its first batch over no checkpoint.
      yield* store.project(first, undefined, { fenced: [{ consumer: row, expected: undefined, checkpoint: "kafka:{\"0\":\"150\"}" }] })
      assert.strictEqual(yield* rows, 150)
      // A stale owner that also resumed from nothing cannot commit: nothing of its batch is written.
      const stale = yield* Effect.flip(store.project(second, undefined, { fenced: [{ consumer: row, expected: undefined, checkpoint: "kafka:{\"0\":\"300\"}" }] }))
      assert.include(stale.message, "CheckpointMoved")
      assert.strictEqual(yield* rows, 150)
      assert.strictEqual(Option.getOrUndefined(yield* store.checkpoint(row)), "kafka:{\"0\":\"150\"}")
      // The owner that resumed from the committed checkpoint goes on.
      yield* store.project(second, undefined, { fenced: [{ consumer: row, expected: "kafka:{\"0\":\"150\"}", checkpoint: "kafka:{\"0\":\"300\"}" }] })
      assert.strictEqual(yield* rows, records.length)
      assert.strictEqual(Option.getOrUndefined(yield* store.checkpoint(row)), "kafka:{\"0\":\"300\"}")
    }).pipe(Effect.scoped, Effect.provide(SqliteEventLog.layer({ filename: f.log, pollIntervalMillis: 50 })))
  }, 60_000)
})
