import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import { EventLog } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { Ownership } from "@ocs/sync/Ownership"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { SyncStateStore, SyncStateUnavailable } from "@ocs/sync/SyncState"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { simulatorClient, storesWithReadModels } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// A full pass handed from one owner to the next between its pages (docs/architecture.md
// §4.14, §4.19): two engines over one log and one sync state, one after the other. While the
// first reads, the state of another server's pass (its start, no cursor yet) replaces its own,
// as a shared state from another server does; the first then saves its cursor and loses the
// tenant. The next owner resumes that cursor: the pass it completes must be the one whose
// first page the log holds, and the copy must lose nothing.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const PRODUCTS = 100
const PAGE = 50

const layers = () => {
  const dir = tempDir("ocs-pass-resumed-")
  const shared = storesWithReadModels(dir)
  const client = simulatorClient(sim)
  const engine = SyncEngine.layer({ operations: [Operation.productList], intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000, pageSize: PAGE }).pipe(
    Layer.provide(client),
    Layer.provide(Ownership.layerAll)
  )
  return { shared, engine }
}

/**
 * The first owner's view of the shared state: when it saves its first cursor, another server's
 * pass start has just replaced the state (as SharedSyncState writes a newer remote state), and
 * right after its save the tenant is gone from it (its loop stops before the next page).
 */
const handedOver = (otherStart: () => number) =>
  Layer.effect(SyncStateStore, Effect.gen(function*() {
    const real = yield* SyncStateStore
    let done = false
    return SyncStateStore.of({
      ...real,
      update: (appId, businessId, resource, patch) => {
        if (done || patch.cursor === undefined || patch.cursor === null) return real.update(appId, businessId, resource, patch)
        done = true
        return real.update(appId, businessId, resource, { fullStartedAt: otherStart(), cursor: null, windowEnd: null }).pipe(
          Effect.andThen(real.update(appId, businessId, resource, patch)),
          Effect.andThen(Effect.fail(new SyncStateUnavailable({ message: "the tenant moved to another server" })))
        )
      }
    })
  }))

describe("a full pass resumed by a new owner", () => {
  it.live("completes the pass its cursor was saved with: nothing the first owner's page listed is deleted", () => {
    const { engine, shared } = layers()
    return Effect.gen(function*() {
      const registry = yield* TenantRegistry
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: PRODUCTS }))
      yield* registry.upsertApp(t.app.appId, ["vt"])
      yield* registry.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* registry.business(t.app.appId, t.business.businessId))
      const key = Operation.resourceKey(Operation.productList)

      // The first owner reads page 1 and stops, its state replaced in between.
      let other = 0
      const first = yield* Effect.flatMap(SyncEngine, (sync) => sync.runOnce(b, Operation.productList)).pipe(
        Effect.provide(engine.pipe(Layer.provide(handedOver(() => (other = Date.now() + 1))))),
        Effect.andThen((r) => Effect.as(Effect.sleep(5), r))
      )
      assert.deepStrictEqual([first.mode, first.pages, first.outcome], ["full", 1, "error"])
      const store = yield* SyncStateStore
      const stopped = yield* store.state(b.appId, b.businessId, key)
      assert.isNotNull(stopped.cursor, "a cursor to resume from")

      // The next owner resumes and completes the pass.
      const next = yield* Effect.flatMap(SyncEngine, (sync) => sync.runOnce(b, Operation.productList)).pipe(Effect.provide(engine))
      assert.deepStrictEqual([next.mode, next.pages, next.outcome], ["resume", 1, "done"])

      const rm = yield* ReadModels.ReadModels
      yield* rm.catchUp()
      yield* rm.catchUp()
      const log = yield* EventLog.EventLog
      const records = yield* Stream.runCollect(log.read({ tenant: "all" }))
      const passes = records.filter((r) => r.type === EngineRecord.PASS_TYPE).map((r) => JSON.parse(r.body).pass.id as string)
      const pages = records.filter((r) => r.type === Operation.key(Operation.productList)).map((r) => EngineRecord.passOf(r.meta))
      const deleted = records.filter((r) => r.type === EngineRecord.CHANGES_TYPE).flatMap((r) => DomainEvent.decode(r)).filter((e) => e._tag === "ProductDeleted")
      assert.strictEqual(deleted.length, 0, `the service deleted nothing (pages of passes ${pages.join(", ")}; completed ${passes.join(", ")})`)
      assert.deepStrictEqual(passes, [pages[0]], "the pass completed is the one that read page 1")
      assert.deepStrictEqual(pages, [pages[0], pages[0]])
      assert.notStrictEqual(stopped.fullStartedAt, other, "the cursor was saved with the start of the pass that read the page before it")
      assert.strictEqual((yield* rm.products({ appId: b.appId, businessId: b.businessId }, { limit: 1000 })).items.length, PRODUCTS)
    }).pipe(Effect.provide(shared))
  }, 60_000)
})
