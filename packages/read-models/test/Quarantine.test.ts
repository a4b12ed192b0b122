import { assert, describe, it } from "@effect/vitest"
import { Checkpoints } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { APP, BIZ, OTHER_BIZ, append, files, layer, otherTenant, readLog, syncPage, tenant, webhook } from "./helpers.ts"

const T1 = "2024-01-01T00:00:00Z"
const T3 = "2024-01-03T00:00:00Z"

const name = (t: typeof tenant, id: string) =>
  Effect.gen(function*() {
    const rm = yield* ReadModels.ReadModels
    return Option.getOrUndefined(yield* rm.product(t, id))?.name
  })

describe("quarantine: a tenant predicate holds back records of businesses not accepted", () => {
  it.live("refused records are remembered, the checkpoint passes them, release applies them late under the conflict rule", () => {
    const f = files()
    const accepted = new Set([OTHER_BIZ])
    const follow: ReadModels.FollowOptions = { accepts: (appId, businessId) => appId === APP && accepted.has(businessId) }
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* append([
        webhook(BIZ, "productUpdate", { id: 1, name: "older, quarantined", updatedAt: T1 }),
        webhook(BIZ, "productUpdate", { id: 2, name: "earlier in the log, quarantined" }),
        webhook(BIZ, "productUpdate", { id: 3, name: "only quarantined" }),
        syncPage(BIZ, "depot", [{ id: 1, name: "earlier depot, quarantined" }]),
        webhook(OTHER_BIZ, "productUpdate", { id: 1, name: "accepted business" }),
        webhook(null, "webhooksEnabled", { registeredEvents: { "101": "productAdd" } })
      ])
      const first = yield* rm.catchUp(undefined, follow)
      assert.strictEqual(first.quarantined, 4)
      assert.strictEqual(first.records, 2)
      // The projection never stalls on them: the checkpoint is past the last record.
      assert.strictEqual(Checkpoints.parseSqlite(Option.getOrThrow(yield* rm.checkpoint())), 6)
      assert.strictEqual((yield* rm.counts(tenant)).products, 0)
      assert.strictEqual((yield* rm.depots(tenant)).length, 0)
      assert.strictEqual(yield* name(otherTenant, "1"), "accepted business")
      // Records without a business are applied whatever the predicate says.
      assert.isTrue(Option.isSome(yield* rm.webhooks(tenant)))

      const listed = yield* rm.quarantine()
      assert.deepStrictEqual(listed.tenants, [{ appId: APP, businessId: BIZ, records: 4, firstOffset: 1, lastOffset: 4, lastReceivedAt: listed.tenants[0]!.lastReceivedAt }])
      assert.deepStrictEqual(listed.latest.map((r) => [r.offset, r.businessId, r.type]), [[4, BIZ, "depot/list.page"], [3, BIZ, "productUpdate"], [2, BIZ, "productUpdate"], [1, BIZ, "productUpdate"]])
      assert.strictEqual((yield* rm.quarantine({ limit: 1 })).latest.length, 1)
      assert.strictEqual((yield* rm.quarantine({ appId: "999" })).tenants.length, 0)

      // The business registers; newer facts arrive and are applied before the release.
      accepted.add(BIZ)
      yield* append([
        webhook(BIZ, "productUpdate", { id: 1, name: "newer", updatedAt: T3 }),
        webhook(BIZ, "productUpdate", { id: 2, name: "later in the log" }),
        syncPage(BIZ, "depot", [{ id: 1, name: "later depot" }])
      ])
      assert.strictEqual((yield* rm.catchUp(undefined, follow)).records, 3)

      const released = yield* rm.release(tenant)
      assert.strictEqual(released.records, 4)
      // Late application: newer updatedAt wins; without one, the later log position wins;
      // an entity only the quarantine held appears.
      assert.strictEqual(yield* name(tenant, "1"), "newer")
      assert.strictEqual(yield* name(tenant, "2"), "later in the log")
      assert.strictEqual(yield* name(tenant, "3"), "only quarantined")
      assert.strictEqual((yield* rm.depots(tenant))[0]!.name, "later depot")
      assert.deepStrictEqual(yield* rm.quarantine(), { tenants: [], latest: [] })
      // The release moved no checkpoint, and a second one finds nothing.
      assert.strictEqual(Checkpoints.parseSqlite(Option.getOrThrow(yield* rm.checkpoint())), 9)
      assert.strictEqual((yield* rm.release(tenant)).records, 0)

      // The late result equals projecting the whole log with every business accepted.
      const rebuilt = `${f.dir}/rebuilt.db`
      yield* ReadModels.rebuild({ filename: rebuilt })
      const live = yield* rm.digest()
      const replay = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuilt }), (r) => r.digest()))
      assert.strictEqual(live.digest, replay.digest)
      // Change detection is not the subject here: the log holds only the records appended above.
    }).pipe(Effect.provide(layer(f, { detectChanges: false })))
  })

  it.live("a redelivered quarantined record is remembered once", () => {
    const f = files()
    const refuse = () => false
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* append([webhook(BIZ, "productUpdate", { id: 1, name: "x" })])
      assert.strictEqual((yield* rm.catchUp(undefined, { accepts: refuse })).quarantined, 1)
      const again = yield* rm.project(yield* readLog, { accepts: refuse })
      assert.strictEqual(again.quarantined, 1)
      assert.strictEqual(again.records, 0)
      assert.strictEqual((yield* rm.quarantine()).tenants[0]!.records, 1)
      assert.strictEqual((yield* rm.counts(tenant)).products, 0)
    }).pipe(Effect.provide(layer(f)))
  })
})
