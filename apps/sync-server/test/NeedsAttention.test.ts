import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Operation } from "@ocs/protocol"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { watchTenants } from "../src/http/Server.ts"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { Notices, SyncState } from "@ocs/sync"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { engineLayer } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const operations = [Operation.productList, Operation.orderList, Operation.customerList, Operation.productInventory([1]), Operation.productInventory([3])] as ReadonlyArray<Operation.Operation<unknown>>

const testLayer = () =>
  engineLayer(tempDir("ocs-attention-"), sim, { operations, intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000 })

const register = (t: { app: { appId: string }; business: { businessId: string }; token: { accessToken: string } }, extra: { expiresAt?: number } = {}) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    yield* store.upsertApp(t.app.appId, ["vt"])
    yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken, expiresAt: extra.expiresAt ?? null })
    return { appId: t.app.appId, businessId: t.business.businessId }
  })

const callsFor = (appId: string, since: number) => Effect.promise(() => sim.control.calls({ appId, since })).pipe(Effect.map((r) => r.calls))

describe("needs-attention states, from the simulator's error modes", () => {
  it.live("tenant-level errors put the tenant on hold with the reason, and no call follows", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const cases: Array<[string, () => Promise<{ app: { appId: string }; business: { businessId: string }; token: { accessToken: string } }>]> = [
        ["ERR_BUSINESS_NOT_ENABLE_API", async () => {
          const t = await sim.control.createTenant({ products: 5 })
          await sim.control.setApiEnabled(t.business.businessId, false)
          return t
        }],
        ["ERR_INVALID_ACCESS_TOKEN", async () => {
          const t = await sim.control.createTenant({ products: 5 })
          await sim.control.expireToken(t.token.accessToken)
          return t
        }],
        ["ERR_INVALID_VERSION", async () => {
          const t = await sim.control.createTenant({ products: 5 })
          const old = await sim.control.createToken({ appId: t.app.appId, businessId: t.business.businessId, version: "2.0" })
          return { ...t, token: old }
        }],
        ["ERR_INVALID_BUSINESS_ID", async () => {
          const t = await sim.control.createTenant({ products: 5 })
          return { ...t, business: { businessId: "999999999" } }
        }]
      ]
      for (const [code, make] of cases) {
        const t = yield* register(yield* Effect.promise(make))
        yield* sync.syncTenant(t.appId, t.businessId)
        const b = Option.getOrThrow(yield* store.business(t.appId, t.businessId))
        assert.strictEqual(b.status, "attention", code)
        assert.strictEqual(b.attention?.code, code)
        const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
        yield* sync.syncTenant(t.appId, t.businessId)
        assert.strictEqual((yield* callsFor(t.appId, since)).length, 0, `${code}: no retry storm`)
        const errors = yield* (yield* Notices.Notices).recentErrors(10, t.appId)
        assert.isTrue(errors.some((e) => e.message.includes(code)), `${code} recorded`)
      }
    }).pipe(Effect.provide(testLayer())), 60_000)

  it.live("a new grant lifts the hold", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const created = yield* Effect.promise(() => sim.control.createTenant({ products: 5 }))
      yield* Effect.promise(() => sim.control.expireToken(created.token.accessToken))
      const t = yield* register(created)
      yield* sync.syncTenant(t.appId, t.businessId)
      assert.strictEqual(Option.getOrThrow(yield* store.business(t.appId, t.businessId)).status, "attention")
      const fresh = yield* Effect.promise(() => sim.control.createToken({ appId: t.appId, businessId: t.businessId }))
      yield* store.upsertBusiness({ appId: t.appId, businessId: t.businessId, accessToken: fresh.accessToken })
      const reports = yield* sync.syncTenant(t.appId, t.businessId)
      assert.strictEqual(Option.getOrThrow(yield* store.business(t.appId, t.businessId)).status, "active")
      assert.isTrue(reports.some((r) => r.mode === "full" && r.outcome === "done" && r.records > 0), JSON.stringify(reports))
    }).pipe(Effect.provide(testLayer())), 30_000)

  it.live("ERR_403 and ERR_INVALID_DEPOT_ID pause only that resource; the rest syncs", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const t = yield* register(yield* Effect.promise(() => sim.control.createTenant({ products: 30, orders: 5, permissions: ["product", "inventory"], depots: [1] })))
      const inventory = (depot: number) => Operation.resourceKey(Operation.productInventory([depot]))
      const reports = yield* sync.syncTenant(t.appId, t.businessId)
      const states = new Map((yield* (yield* SyncState.SyncStateStore).states(t.appId, t.businessId)).map((s) => [s.resource, s]))
      assert.strictEqual(states.get("pos:/v3.0/order/list")?.paused?.code, "ERR_403")
      assert.strictEqual(states.get("pos:/v3.0/customer/list")?.paused?.code, "ERR_403")
      assert.strictEqual(states.get(inventory(3))?.paused?.code, "ERR_INVALID_DEPOT_ID")
      assert.isNull(states.get(inventory(1))?.paused)
      assert.isNotNull(states.get("pos:/v3.0/product/list")?.fullCompletedAt)
      assert.strictEqual(Option.getOrThrow(yield* store.business(t.appId, t.businessId)).status, "active")
      assert.isTrue(reports.some((r) => r.outcome === "paused"))
      // Paused resources are not called again; the others are.
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      yield* sync.syncTenant(t.appId, t.businessId, { forceFull: true })
      const calls = yield* callsFor(t.appId, since)
      assert.isTrue(calls.every((c) => c.operation !== "order/list" && c.operation !== "customer/list"))
      assert.isTrue(calls.some((c) => c.operation === "product/list"))
    }).pipe(Effect.provide(testLayer())), 30_000)

  it.live("token expiry is warned at 30, 7 and 1 days, once each; webhook silence is flagged", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const day = 24 * 3600 * 1000
      const soon = yield* register(yield* Effect.promise(() => sim.control.createTenant({ products: 1 })), { expiresAt: Date.now() + 5 * day })
      const later = yield* register(yield* Effect.promise(() => sim.control.createTenant({ products: 1 })), { expiresAt: Date.now() + 100 * day })
      yield* store.touchWebhook(later.appId, later.businessId, Date.now() - 2 * 3600 * 1000)
      yield* watchTenants(3600 * 1000)
      yield* watchTenants(3600 * 1000)
      const soonTags = (yield* (yield* Notices.Notices).recentErrors(50, soon.appId)).map((e) => e.tag).sort()
      assert.deepStrictEqual(soonTags, ["TokenExpiry30d", "TokenExpiry7d"])
      const laterTags = (yield* (yield* Notices.Notices).recentErrors(50, later.appId)).map((e) => e.tag)
      assert.deepStrictEqual(laterTags, ["WebhookSilence"])
    }).pipe(Effect.provide(testLayer())), 30_000)
})
