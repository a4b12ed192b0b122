import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Fiber, Option, Schedule } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { append, files, layer, mixedRecords, readLog, tenant } from "./helpers.ts"

const digestOf = (filename: string, t?: Parameters<ReadModels.ReadModelsService["digest"]>[0]) =>
  Effect.scoped(Effect.gen(function*() {
    const rm = yield* ReadModels.make({ filename })
    return yield* rm.digest(t)
  }))

describe("rebuild", () => {
  it.live("a rebuild equals the live projection (run), in whole and per tenant", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* append(mixedRecords(700, 11))
      const fiber = yield* rm.run()
      // Appends while the projector follows the log.
      const more = yield* append(mixedRecords(500, 12))
      const head = more[more.length - 1]!.offset
      yield* rm.checkpoint().pipe(
        Effect.repeat({ until: (c) => Option.getOrUndefined(c) === `sqlite:${head}`, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("20 seconds")
      )
      yield* Fiber.interrupt(fiber)
      const live = yield* rm.digest()
      const rebuiltFile = NodePath.join(f.dir, "rebuilt.db")
      const stats = yield* rm.rebuild({ filename: rebuiltFile })
      assert.strictEqual(stats.records, 1200)
      assert.strictEqual(stats.lastOffset, head)
      assert.deepStrictEqual(yield* digestOf(rebuiltFile), live)
      assert.deepStrictEqual(yield* digestOf(rebuiltFile, tenant), yield* rm.digest(tenant))
      // The rebuilt file carries its checkpoint, so it can take over from here.
      const takeOver = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuiltFile }), (r) => r.checkpoint()))
      assert.deepStrictEqual(takeOver, Option.some(`sqlite:${head}`))
      // rebuild never overwrites a file.
      const refused = yield* Effect.flip(rm.rebuild({ filename: rebuiltFile }))
      assert.strictEqual(refused._tag, "RebuildTargetExists")
    }).pipe(Effect.provide(layer(f, { batchSize: 64, maxBatchWaitMillis: 10, detectChanges: false })))
  })

  it.live("a point-in-time rebuild equals projecting the log up to that offset or instant", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* append(mixedRecords(600, 5))
      const records = yield* readLog
      const cut = records[349]!
      const partial = yield* Effect.scoped(Effect.gen(function*() {
        const only = yield* ReadModels.make({ filename: NodePath.join(f.dir, "partial.db") })
        yield* only.project(records.slice(0, 350))
        return yield* only.digest()
      }))
      const byOffset = NodePath.join(f.dir, "by-offset.db")
      const byTime = NodePath.join(f.dir, "by-time.db")
      const stats = yield* rm.rebuild({ filename: byOffset, untilOffset: cut.offset, batchSize: 100 })
      assert.strictEqual(stats.records, 350)
      yield* rm.rebuild({ filename: byTime, untilReceivedAt: cut.receivedAt })
      assert.deepStrictEqual(yield* digestOf(byOffset), partial)
      assert.deepStrictEqual(yield* digestOf(byTime), partial)
      // And it differs from the whole log (the cut is meaningful).
      yield* rm.catchUp()
      assert.notStrictEqual((yield* rm.digest()).digest, partial.digest)
      assert.isFalse(NodeFs.existsSync(`${byOffset}.rebuilding`))
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("a tenant rebuild holds only that tenant and equals its live rows", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* append(mixedRecords(300, 9))
      yield* rm.catchUp()
      const one = NodePath.join(f.dir, "one.db")
      yield* rm.rebuild({ filename: one, tenant })
      const rebuilt = yield* digestOf(one, tenant)
      const live = yield* rm.digest(tenant)
      // Application-level rows (webhooksEnabled) are not the tenant's.
      assert.deepStrictEqual({ ...rebuilt.tables, webhooks_enabled: undefined }, { ...live.tables, webhooks_enabled: undefined })
      const everything = yield* digestOf(one)
      assert.strictEqual(everything.tables["products"]!.rows, rebuilt.tables["products"]!.rows)
    }).pipe(Effect.provide(layer(f)))
  })
})
