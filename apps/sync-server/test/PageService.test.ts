import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Path from "node:path"
import { Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { SyncStateStore } from "@ocs/sync/SyncState"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { engineLayer } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// The page service (docs/api-catalogue.md §9) pulled by the engine: pages and each page's
// conversations (a resource per page), and a page whose access expires mid-run pausing that
// page's resource alone, with the reason kept. Messages and typed read models: not yet.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const PAGE_IDS = ["1000000001", "1000000002", "1000000003"]
const reads = [Operation.pageList, ...PAGE_IDS.map(Operation.conversationList)]

const testLayer = () => {
  const dir = tempDir("ocs-vpage-")
  return Layer.merge(
    engineLayer(dir, sim, { operations: reads, intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000, pageSize: 50 }),
    ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") })
  )
}

describe("the page service", () => {
  it.live("pulls pages and every page's conversations; an expired page pauses only its own resource", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      const states = yield* SyncStateStore
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 5, orders: 0, bills: 0, customers: 0 }))
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const tenant = { appId: b.appId, businessId: b.businessId }
      const conversations = Effect.map(rm.documents(tenant, "conversation", { limit: 1000 }), (p) => p.items)

      for (const op of reads) assert.strictEqual((yield* sync.runOnce(b, op)).outcome, "done", Operation.resourceKey(op))
      yield* rm.catchUp()
      assert.strictEqual((yield* rm.documents(tenant, "page", { limit: 100 })).items.length, 3)
      assert.strictEqual((yield* conversations).length, 180, "60 conversations of each page, 50 a call")

      // The second page's access expires; the next pass of every resource runs.
      yield* Effect.promise(() => sim.control.expirePage(b.businessId, PAGE_IDS[1]!))
      const outcomes = yield* Effect.forEach(reads, (op) => Effect.map(sync.runOnce(b, op, { forceFull: true }), (r) => r.outcome))
      assert.deepStrictEqual(outcomes, ["done", "done", "paused", "done"])
      const paused = yield* states.state(b.appId, b.businessId, Operation.resourceKey(reads[2]!))
      assert.strictEqual(paused.paused?.code, "ERR_PAGE_EXPIRED", "the reason is kept")
      for (const op of [reads[1]!, reads[3]!]) assert.isNull((yield* states.state(b.appId, b.businessId, Operation.resourceKey(op))).paused)
      // Paused, it is not pulled again; the others are.
      assert.strictEqual((yield* sync.runOnce(b, reads[2]!, { forceFull: true })).mode, "skipped")
      assert.strictEqual((yield* sync.runOnce(b, reads[3]!, { forceFull: true })).outcome, "done")
      yield* rm.catchUp()
      assert.strictEqual((yield* conversations).length, 180, "what the copy held of the expired page stays")
    }).pipe(Effect.provide(testLayer())), 60_000)
})
