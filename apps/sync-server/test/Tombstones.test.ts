import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import { EventLog } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { engineOver, storesWithReadModels } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// Tombstones come only from a full pass that completed, without error and without filters
// (docs/architecture.md §4.14): the engine against the simulator, the log and read models on disk.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const testLayer = (operations: ReadonlyArray<Operation.Operation<any>> = [Operation.productList]) => {
  return engineOver(storesWithReadModels(tempDir("ocs-tombstones-")), sim, { operations, intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000, pageSize: 10 })
}

/** Projects what the log holds, relays the changes found and projects them too. */
const project = Effect.gen(function*() {
  const rm = yield* ReadModels.ReadModels
  yield* rm.catchUp()
  yield* rm.catchUp()
})

/** The deletions the read models found, as `tag:id`. */
const found = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const records = yield* Stream.runCollect(log.read({ tenant: "all", types: [EngineRecord.CHANGES_TYPE] }))
  return records.flatMap((r) => DomainEvent.decode(r)).filter((e) => e._tag.endsWith("Deleted")).map((e) => `${e._tag}:${Option.getOrUndefined(DomainEvent.entityId(e))}`)
})

const deletions = Effect.map(found, (all) => all.filter((e) => e.startsWith("ProductDeleted:")).map((e) => e.slice("ProductDeleted:".length)))

describe("tombstones from full passes", () => {
  it.live("a failed pass and a partial pass delete nothing; a completed full pass deletes what the service no longer serves", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 35 }))
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const tenant = { appId: b.appId, businessId: b.businessId }

      // The baseline: every product in the copy, nothing deleted.
      const first = yield* sync.runOnce(b, Operation.productList)
      assert.strictEqual(first.outcome, "done")
      yield* project
      const ids = (yield* rm.products(tenant, { limit: 100 })).items.map((p) => p.id)
      assert.strictEqual(ids.length, 35)
      const gone = ids[7]!
      yield* Effect.promise(() => sim.control.deleteProduct(b.businessId, gone, { silent: true }))

      // A pass that fails half way (the third page is refused) deletes nothing.
      const fault = yield* Effect.promise(() => sim.control.addFault({ kind: "malformed", variant: "nonJson", businessId: b.businessId, operation: "product/list", count: 100 }))
      const failed = yield* sync.runOnce(b, Operation.productList, { forceFull: true })
      yield* Effect.promise(() => sim.control.removeFault(fault.id))
      assert.strictEqual(failed.outcome, "error")
      yield* project
      assert.isTrue(Option.isSome(yield* rm.product(tenant, gone)), "a failed pass deleted nothing")
      assert.deepStrictEqual(yield* deletions, [])

      // A partial pass (a filter: only some products) completes and deletes nothing either.
      const filtered = { ...Operation.productList, filters: { name: "no product has this name" } } as Operation.Operation<unknown>
      const partial = yield* sync.runOnce(b, filtered, { forceFull: true })
      assert.strictEqual(partial.outcome, "done")
      yield* project
      assert.isTrue(Option.isSome(yield* rm.product(tenant, gone)), "a partial pass deleted nothing")
      assert.deepStrictEqual(yield* deletions, [])

      // The next full pass completes: the product the service no longer serves is deleted, once.
      const whole = yield* sync.runOnce(b, Operation.productList, { forceFull: true })
      assert.strictEqual(whole.outcome, "done")
      assert.strictEqual(whole.records, 34)
      yield* project
      assert.deepStrictEqual(yield* deletions, [gone])
      const left = (yield* rm.products(tenant, { limit: 100 })).items.map((p) => p.id)
      assert.strictEqual(left.length, 34)
      assert.notInclude(left, gone)
      // Another complete pass finds nothing more to delete.
      yield* sync.runOnce(b, Operation.productList, { forceFull: true })
      yield* project
      assert.deepStrictEqual(yield* deletions, [gone])
    }).pipe(Effect.provide(testLayer())), 60_000)

  it.live("customers, bills and a product's stock rows: a failed or depot-narrowed pass deletes nothing, a complete one deletes each once", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      // Orders and bills of the last 40 days: a 62-day horizon reads them all.
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 12, customers: 15, bills: 15, orders: 0, historyDays: 40 }))
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const tenant = { appId: b.appId, businessId: b.businessId }
      const reads = [Operation.customerList, Operation.billList, Operation.productInventory()]
      const passAll = Effect.forEach(reads, (op) => sync.runOnce(b, op, { forceFull: true }).pipe(Effect.tap((r) => Effect.sync(() => assert.strictEqual(r.outcome, "done", Operation.key(op))))))

      // The baseline.
      yield* passAll
      yield* project
      const customers = (yield* rm.customers(tenant, { limit: 100 })).items.map((c) => c.id)
      const bills = (yield* rm.bills(tenant, { limit: 100 })).items.map((x) => x.id)
      const stocked = [...new Set((yield* rm.inventory(tenant)).map((l) => l.productId))]
      assert.strictEqual(customers.length, 15)
      assert.strictEqual(bills.length, 15)
      assert.strictEqual(stocked.length, 12)
      const [customer, bill, product] = [customers[3]!, bills[4]!, stocked[5]!]
      yield* Effect.promise(() => sim.control.deleteCustomer(b.businessId, customer))
      yield* Effect.promise(() => sim.control.deleteBill(b.businessId, bill))
      // The product goes silently: its stock item is no longer served by product/inventory.
      yield* Effect.promise(() => sim.control.deleteProduct(b.businessId, product, { silent: true }))

      // Failed passes (every read refused half way) delete nothing.
      const faults = yield* Effect.forEach(["customer/list", "bill/list", "product/inventory"], (operation) =>
        Effect.promise(() => sim.control.addFault({ kind: "malformed", variant: "nonJson", businessId: b.businessId, operation, count: 100 })))
      for (const op of reads) assert.strictEqual((yield* sync.runOnce(b, op, { forceFull: true })).outcome, "error", Operation.key(op))
      yield* Effect.forEach(faults, (f) => Effect.promise(() => sim.control.removeFault(f.id)))
      yield* project
      assert.deepStrictEqual(yield* found, [], "failed passes deleted nothing")

      // A depot-narrowed stock read is partial: it completes and deletes nothing.
      const narrowed = yield* sync.runOnce(b, Operation.productInventory([1]), { forceFull: true })
      assert.strictEqual(narrowed.outcome, "done")
      yield* project
      assert.deepStrictEqual(yield* found, [], "a partial pass deleted nothing")
      assert.include((yield* rm.customers(tenant, { limit: 100 })).items.map((c) => c.id), customer)

      // Complete passes: one typed deletion each, and the copy no longer lists them.
      yield* passAll
      yield* project
      assert.deepStrictEqual((yield* found).toSorted(), [`BillDeleted:${bill}`, `CustomerDeleted:${customer}`, `InventoryDeleted:${product}`])
      assert.notInclude((yield* rm.customers(tenant, { limit: 100 })).items.map((c) => c.id), customer)
      assert.notInclude((yield* rm.bills(tenant, { limit: 100 })).items.map((x) => x.id), bill)
      assert.notInclude((yield* rm.inventory(tenant)).map((l) => l.productId), product)
      assert.isTrue(Option.getOrThrow(yield* rm.customer(tenant, customer)).deleted, "a tombstone, not a hole")
      // Another complete cycle finds nothing more.
      yield* passAll
      yield* project
      assert.strictEqual((yield* found).length, 3)
    }).pipe(Effect.provide(testLayer([Operation.customerList, Operation.billList, Operation.productInventory()]))), 60_000)
})
