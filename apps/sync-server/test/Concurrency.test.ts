import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { Operation } from "@ocs/protocol"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { SyncState } from "@ocs/sync"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { engineLayer } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// sync.concurrency: at most that many tenants run their passes at once. What the simulator saw
// tells: each call's interval at the service, per tenant; no instant may hold calls of more
// tenants than the bound (a tenant holds its slot for its whole round of passes).

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
  // Every page takes a while, so that unbounded tenants' passes overlap.
  await sim.control.addFault({ kind: "latency", ms: 60, operation: "product/list" })
})
afterAll(async () => {
  await sim.close()
})

const TENANTS = 6

const testLayer = (concurrency: number | undefined) =>
  engineLayer(tempDir("ocs-concurrency-"), sim, {
    operations: [Operation.productList], intervalMs: 3_600_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 3_600_000, pageSize: 20, concurrency, superviseEveryMs: 50
  })

/** The most tenants whose calls were in flight at the service at one instant. */
const peakTenants = (calls: ReadonlyArray<{ readonly at: number; readonly durationMs: number; readonly businessId: string | null }>) => {
  // A call's interval, less a millisecond at its start for the log's whole-millisecond arrival time.
  const edges = calls.flatMap((c) => [{ t: c.at + 1, tenant: c.businessId, d: 1 }, { t: c.at + c.durationMs, tenant: c.businessId, d: -1 }])
  edges.sort((a, b) => a.t - b.t || a.d - b.d)
  const open = new Map<string | null, number>()
  let peak = 0
  for (const e of edges) {
    open.set(e.tenant, (open.get(e.tenant) ?? 0) + e.d)
    if ((open.get(e.tenant) ?? 0) <= 0) open.delete(e.tenant)
    peak = Math.max(peak, open.size)
  }
  return peak
}

/** Registers the tenants, starts the loops, waits for every first full sync; the calls the simulator saw. */
const firstSyncOfAll = (concurrency: number | undefined) =>
  Effect.gen(function*() {
    const registry = yield* TenantRegistry
    const businesses = new Set<string>()
    for (let i = 0; i < TENANTS; i++) {
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 60, orders: 0, bills: 0, customers: 0 }))
      yield* registry.upsertApp(t.app.appId, ["vt"])
      yield* registry.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      businesses.add(String(t.business.businessId))
    }
    const since = Date.now()
    const sync = yield* SyncEngine
    yield* sync.start
    const states = yield* SyncState.SyncStateStore
    yield* states.states().pipe(
      Effect.repeat({ until: (all) => all.length === TENANTS && all.every((s) => s.fullCompletedAt !== null), schedule: Schedule.spaced("50 millis") }),
      Effect.timeout("60 seconds")
    )
    const { calls } = yield* Effect.promise(() => sim.control.calls({ operation: "product/list", sinceMs: since, limit: 1000 }))
    return calls.filter((c) => c.businessId !== null && businesses.has(String(c.businessId)))
  }).pipe(Effect.scoped, Effect.provide(testLayer(concurrency)))

describe("sync.concurrency", () => {
  it.live("two slots: the calls of at most two tenants are in flight at once, and every tenant syncs", () =>
    Effect.gen(function*() {
      const calls = yield* firstSyncOfAll(2)
      assert.strictEqual(new Set(calls.map((c) => c.businessId)).size, TENANTS)
      assert.isAtMost(peakTenants(calls), 2)
    }), 90_000)

  it.live("no bound: the tenants' passes overlap", () =>
    Effect.gen(function*() {
      const calls = yield* firstSyncOfAll(undefined)
      assert.strictEqual(new Set(calls.map((c) => c.businessId)).size, TENANTS)
      assert.isAbove(peakTenants(calls), 2)
    }), 90_000)
})
