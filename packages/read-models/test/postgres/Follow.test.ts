/**
 * The Postgres store follows a log as the SQLite read models do: `run` subscribes from the
 * stored checkpoint, `catchUp` resumes after a restart, and the copy then equals the SQLite
 * file's projection of the same log (same digest).
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { PostgresStore } from "@ocs/read-models/postgres"
import { Effect, Fiber, Option } from "effect"
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
})
