import { assert, describe, it } from "@effect/vitest"
import { SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { ReadModels } from "@ocs/read-models"
import { Effect } from "effect"
import * as NodePath from "node:path"
import * as Digest from "../src/internal/digest.ts"
import * as Plan from "../src/internal/plan.ts"
import * as Planner from "../src/internal/planner.ts"
import * as Projector from "../src/internal/projector.ts"
import { append, files, mixedRecords, readLog } from "./helpers.ts"

/** The plans of consecutive parts, as one plan (ends shifted). */
const concat = (plans: ReadonlyArray<Plan.Plan>): Plan.Plan => {
  const out = Plan.emptyPlan()
  for (const p of plans) {
    const base = out.ops.length
    out.ops.push(...p.ops)
    out.params.push(...p.params)
    out.ends.push(...p.ends.map((e) => e + base))
    out.events.push(...p.events)
  }
  return out
}

describe("planner thread", () => {
  it.live("plans exactly what the calling thread plans, batch by batch, in order", () => {
    const f = files()
    return Effect.scoped(Effect.gen(function*() {
      yield* append(mixedRecords(1500, 3))
      const records = yield* readLog
      const pipeline = yield* Planner.make<(typeof records)[number]>(f.rm)
      // Wait for the thread, so that it (and not only this thread) plans chunks.
      assert.isTrue(yield* Effect.promise(() => pipeline.workerReady))
      const cuts = [0, 700, 701, 1300, records.length]
      for (let i = 0; i + 1 < cuts.length; i++) pipeline.add(records.slice(cuts[i], cuts[i + 1]))
      for (let i = 0; i + 1 < cuts.length; i++) {
        const batch = yield* Effect.promise(() => pipeline.take())
        const expected = records.slice(cuts[i], cuts[i + 1])
        assert.deepStrictEqual(batch.records, expected)
        assert.deepStrictEqual(concat(batch.plans), Plan.planRecords(expected))
      }
      assert.strictEqual(pipeline.size(), 0)
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: f.log, synchronous: "NORMAL" }))))
  })
})

describe("execute in a fresh file", () => {
  it.live("skips redelivered records and applies late ones, as apply does", () => {
    const f = files()
    return Effect.scoped(Effect.gen(function*() {
      yield* append(mixedRecords(300, 5))
      const records = yield* readLog
      // In order, a redelivered run, out of order, then in order again.
      const batches = [records.slice(0, 100), records.slice(50, 150), records.slice(200, 250).toReversed(), records.slice(150, 300)]
      const run = (name: string, fresh: boolean) =>
        Effect.gen(function*() {
          const db = yield* SqliteDatabase.make({ filename: NodePath.join(f.dir, name), migrationsFolder: ReadModels.migrationsFolder })
          return yield* db.use("run", (_, client) => {
            const projector = Projector.make(client, { fresh })
            const stats = batches.map((batch) =>
              client.transaction(() => fresh ? projector.execute(batch, [Plan.planRecords(batch)]) : projector.apply(batch)).immediate())
            const applied = (client.prepare("SELECT COUNT(*) AS n FROM applied_records").get() as { n: number }).n
            return { stats, applied, digest: Digest.compute(client, undefined).digest }
          })
        })
      const viaExecute = yield* run("execute.db", true)
      const viaApply = yield* run("apply.db", false)
      assert.deepStrictEqual(viaExecute, viaApply)
      assert.deepStrictEqual(viaExecute.stats.map((s) => s.records), [100, 50, 50, 100])
      assert.strictEqual(viaExecute.applied, 300)
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: f.log, synchronous: "NORMAL" }))))
  })
})
