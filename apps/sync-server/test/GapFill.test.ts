import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Option, Schedule } from "effect"
import { Operation } from "@ocs/protocol"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { SyncState } from "@ocs/sync"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { engineLayer } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// Gap fill (docs/architecture.md §4.14): with an hour between incremental passes, a tenant still
// pulls what changed when told to (webhooksEnabled), when its webhooks are silent past its
// period, and right after a start.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const HOUR = 3_600_000

const testLayer = (dir: string, gapFillSilenceMs: number) =>
  engineLayer(dir, sim, { operations: [Operation.productList], intervalMs: HOUR, reconcileMs: HOUR, overlapMs: 0, horizonMs: HOUR, gapFillSilenceMs, superviseEveryMs: 50 })

/** Waits until the tenant's product/list state satisfies `until` (polling the store). */
const stateUntil = (tenant: { appId: string; businessId: string }, until: (s: { fullCompletedAt: number | null; lastRunAt: number | null }) => boolean) =>
  Effect.flatMap(SyncState.SyncStateStore, (store) =>
    store.state(tenant.appId, tenant.businessId, Operation.resourceKey(Operation.productList)).pipe(
      Effect.repeat({ until, schedule: Schedule.spaced("50 millis") }),
      Effect.timeout("20 seconds")
    ))

const register = Effect.gen(function*() {
  const store = yield* TenantRegistry
  const t = yield* Effect.promise(() => sim.control.createTenant({ products: 5 }))
  yield* store.upsertApp(t.app.appId, ["vt"])
  yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
  return { appId: t.app.appId, businessId: t.business.businessId }
})

describe("gap fill", () => {
  it.live("webhooksEnabled and a restart make a tenant pull what changed, an hour before its interval", () => {
    const dir = tempDir("ocs-gapfill-")
    return Effect.gen(function*() {
      const tenant = yield* Effect.scoped(Effect.gen(function*() {
        const t = yield* register
        const sync = yield* SyncEngine
        yield* sync.start
        const first = yield* stateUntil(t, (s) => s.fullCompletedAt !== null)
        // Told that deliveries failed: an incremental pass now, not in an hour.
        yield* sync.gapFill({ appId: t.appId }, "webhooksEnabled")
        yield* stateUntil(t, (s) => s.lastRunAt !== null && s.lastRunAt > first.lastRunAt!)
        return t
      }).pipe(Effect.provide(testLayer(dir, HOUR))))
      // A restart (same files): the first pass of the tenant is incremental, at once.
      const before = yield* Effect.scoped(Effect.flatMap(SyncState.SyncStateStore, (s) => s.state(tenant.appId, tenant.businessId, Operation.resourceKey(Operation.productList)))).pipe(Effect.provide(testLayer(dir, HOUR)))
      yield* Effect.scoped(Effect.gen(function*() {
        const sync = yield* SyncEngine
        yield* sync.start
        const after = yield* stateUntil(tenant, (s) => s.lastRunAt !== null && s.lastRunAt > before.lastRunAt!)
        assert.strictEqual(after.fullCompletedAt, before.fullCompletedAt, "an incremental pass, not a full one")
      }).pipe(Effect.provide(testLayer(dir, HOUR))))
    })
  }, 60_000)

  it.live("webhooks silent past the tenant's period: incremental passes keep coming", () => {
    const dir = tempDir("ocs-gapfill-")
    return Effect.scoped(Effect.gen(function*() {
      const t = yield* register
      const sync = yield* SyncEngine
      yield* sync.start
      const first = yield* stateUntil(t, (s) => s.fullCompletedAt !== null)
      const second = yield* stateUntil(t, (s) => s.lastRunAt! > first.lastRunAt!)
      const third = yield* stateUntil(t, (s) => s.lastRunAt! > second.lastRunAt!)
      assert.strictEqual(third.fullCompletedAt, first.fullCompletedAt, "incremental passes, not full ones")
      const store = yield* TenantRegistry
      assert.isTrue(Option.isSome(yield* store.business(t.appId, t.businessId)))
    }).pipe(Effect.provide(testLayer(dir, 300))))
  }, 60_000)
})
