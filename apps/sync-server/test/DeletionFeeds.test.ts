import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import * as Path from "node:path"
import { EventLog } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { engineLayer } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// The deletion feeds (order/deleted, bill/deleted; docs/api-catalogue.md, "Deletion feeds"):
// deletions made in the simulator with webhooks off are found by one incremental read of each
// feed, with who and when, as the same typed events a full pass gives; a full pass afterwards
// finds nothing more. The engine against the simulator, the log and read models on disk.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const reads = [Operation.orderList, Operation.billList, Operation.orderDeleted, Operation.billDeleted]

const testLayer = () => {
  const dir = tempDir("ocs-feeds-")
  return Layer.merge(
    engineLayer(dir, sim, { operations: reads, intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000, pageSize: 100 }),
    ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") })
  )
}

const project = Effect.gen(function*() {
  const rm = yield* ReadModels.ReadModels
  yield* rm.catchUp()
  yield* rm.catchUp()
})

/** The deletions as a consumer of the change stream sees them (plugins), in log order. */
const deletions = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const records = yield* Stream.runCollect(log.read({ tenant: "all" }))
  return records.flatMap((r) => DomainEvent.decodeChangeStream(r))
    .filter((e): e is DomainEvent.OrderDeleted | DomainEvent.BillDeleted => e._tag === "OrderDeleted" || e._tag === "BillDeleted")
})

const callsOf = (appId: string, operation: string) =>
  Effect.promise(() => sim.control.calls({ appId, operation, limit: 10_000 })).pipe(Effect.map((r) => r.calls.length))

describe("deletion feeds", () => {
  it.live("one incremental read of each feed finds every deletion, with who and when; a full pass afterwards finds nothing more", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      // Orders and bills of the last 40 days: a 62-day horizon reads them all.
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 20, customers: 5, orders: 300, bills: 200, historyDays: 40 }))
      const appId = t.app.appId
      yield* store.upsertApp(appId, ["vt"])
      yield* store.upsertBusiness({ appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(appId, t.business.businessId))
      const tenant = { appId: b.appId, businessId: b.businessId }

      // The baseline: every order and bill in the copy; the feeds' first read lists nothing.
      for (const op of reads) assert.strictEqual((yield* sync.runOnce(b, op)).outcome, "done", Operation.key(op))
      yield* project
      const orders = (yield* rm.orders(tenant, { limit: 1000 })).items.map((o) => o.id)
      const bills = (yield* rm.bills(tenant, { limit: 1000 })).items.map((x) => x.id)
      assert.isAbove(orders.length, 250)
      assert.isAbove(bills.length, 150)
      assert.deepStrictEqual(yield* deletions, [])

      // Webhooks are off (none enabled): only a pull can find these.
      const goneOrders = orders.filter((_, i) => i % 12 === 5)
      const goneBills = bills.filter((_, i) => i % 10 === 3)
      const before = Date.now()
      for (const id of goneOrders) yield* Effect.promise(() => sim.control.deleteOrder(b.businessId, id))
      for (const id of goneBills) yield* Effect.promise(() => sim.control.deleteBill(b.businessId, id))
      const after = Date.now()
      // The feeds' ranges are whole seconds: the deletions' second is over before the read.
      yield* Effect.sleep("1100 millis")

      // One incremental read of each feed.
      yield* Effect.promise(() => sim.control.clearCalls())
      for (const op of [Operation.orderDeleted, Operation.billDeleted]) {
        const r = yield* sync.runOnce(b, op, { gapFill: true })
        assert.strictEqual(r.mode, "incremental")
        assert.strictEqual(r.outcome, "done")
      }
      const feedCalls = (yield* callsOf(appId, "order/deleted")) + (yield* callsOf(appId, "bill/deleted"))
      assert.strictEqual(feedCalls, 2, "one page each")
      yield* project

      const found = yield* deletions
      assert.deepStrictEqual(
        found.map((e) => e._tag === "OrderDeleted" ? `order:${e.orderId}` : `bill:${e.billId}`).toSorted(),
        [...goneOrders.map((id) => `order:${id}`), ...goneBills.map((id) => `bill:${id}`)].toSorted()
      )
      for (const e of found) {
        assert.strictEqual(e.deletedBy, "7", "who: the user the simulator credits")
        assert.isTrue(e.deletedAt !== undefined && e.deletedAt >= Math.floor(before / 1000) * 1000 && e.deletedAt <= after, "when: the deletion time, to the second")
        assert.notProperty(e, "fromFeed", "the relayed change, not the page's own event")
      }
      for (const id of goneOrders) assert.isTrue(Option.getOrThrow(yield* rm.order(tenant, id)).deleted, `order ${id} is a tombstone`)
      for (const id of goneBills) assert.isTrue(Option.getOrThrow(yield* rm.bill(tenant, id)).deleted, `bill ${id} is a tombstone`)

      // A full pass afterwards (the reconciliation of last resort) finds nothing more.
      yield* Effect.promise(() => sim.control.clearCalls())
      for (const op of [Operation.orderList, Operation.billList]) {
        assert.strictEqual((yield* sync.runOnce(b, op, { forceFull: true })).outcome, "done", Operation.key(op))
      }
      const passCalls = (yield* callsOf(appId, "order/list")) + (yield* callsOf(appId, "bill/list"))
      yield* project
      assert.strictEqual((yield* deletions).length, found.length, "no second event")
      // What the feeds saved: a full pass reads every window of every order and bill.
      assert.isAbove(passCalls, feedCalls * 3)
      // The pass completions are in the log: the pass did run to its end and compare.
      const log = yield* EventLog.EventLog
      const passes = yield* Stream.runCollect(log.read({ tenant: "all", types: [EngineRecord.PASS_TYPE] }))
      assert.isAtLeast(passes.length, 4)

      // The other order: a full pass finds a deletion first; the feed's record of it is no second event.
      const late = orders.find((id) => !goneOrders.includes(id))!
      yield* Effect.promise(() => sim.control.deleteOrder(b.businessId, late))
      yield* Effect.sleep("1100 millis")
      assert.strictEqual((yield* sync.runOnce(b, Operation.orderList, { forceFull: true })).outcome, "done")
      yield* project
      const byPass = (yield* deletions).filter((e) => e._tag === "OrderDeleted" && e.orderId === late)
      assert.strictEqual(byPass.length, 1)
      assert.strictEqual(byPass[0]!.deletedBy, undefined, "a pass cannot tell who")
      assert.strictEqual((yield* sync.runOnce(b, Operation.orderDeleted, { gapFill: true })).mode, "incremental")
      yield* project
      assert.strictEqual((yield* deletions).filter((e) => e._tag === "OrderDeleted" && e.orderId === late).length, 1, "once, whichever came first")
    }).pipe(Effect.provide(testLayer())), 90_000)
})
