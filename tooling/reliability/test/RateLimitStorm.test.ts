/**
 * 429 storm: the simulator allows product/list far less than the server's configured budget
 * (6 calls per 2 s against 150), and under-reports one tenant's lock by a second
 * (`skewUnlockedAt`). Properties: no call reaches the simulator while its key is locked (the
 * call log's `locked` flag, exact to the millisecond), and tenants with little to fetch finish
 * their syncs while the big ones are still being throttled.
 */
import { assert, describe, it } from "vitest"
import { addTenant, admin, eventually, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const STORM = 3
const QUIET = 5
const STORM_PRODUCTS = 3000

const storm: Array<Tenant> = []
const quiet: Array<Tenant> = []
const suite = reliabilitySuite({
  simFlags: ["--products", "10"],
  setup: async (s) => {
    await s.control.setRateLimits({ limit: 150, windowMs: 2000, lockMs: 2000, lockGrowthMs: 1000, operations: { "product/list": { limit: 6 } } })
    for (let i = 0; i < STORM; i++) storm.push(await s.tenant({ products: STORM_PRODUCTS, orders: 0 }))
    for (let i = 0; i < QUIET; i++) quiet.push(await s.tenant({ products: 40, orders: 0 }))
    await s.control.addFault({ kind: "skewUnlockedAt", appId: storm[0]!.appId, seconds: 1 })
  }
})

describe("429 storm", () => {
  it("never calls a locked key, and other tenants progress during the storm", async () => {
    const server = suite.server("ocs-rel-storm-", {
      tenants: storm,
      windowSeconds: 2,
      // The skew fault under-reports by 1 s; the allowance covers it.
      extra: { rateLimits: { skewAllowanceMs: 1500, overrides: { "/v3.0/product/list": { requests: 150, windowSeconds: 2 } } } }
    })
    const started = Date.now()
    await server.start()
    const url = server.url
    const completedAt = async (t: Tenant): Promise<number | null> => {
      const { body } = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}`)
      return (body.sync as Array<any> | undefined)?.find((s) => s.resource === "pos:/v3.0/product/list")?.fullCompletedAt ?? null
    }
    // The storm first; then the quiet tenants arrive, in the middle of it.
    await eventually("the first ERR_429", async () => ((await suite.control.calls({ operation: "product/list", outcome: "ERR_429", limit: 10 })).calls.length > 0 ? true : undefined), 30_000, 100)
    const stormOn = Date.now()
    for (const t of quiet) {
      const added = await addTenant(url, t)
      assert.strictEqual(added.app.status, 201)
      assert.strictEqual(added.tenant.status, 201)
    }
    const quietDone = await eventually("the quiet tenants' full syncs", async () => {
      const times = await Promise.all(quiet.map(completedAt))
      return times.every((x) => x !== null) ? Math.max(...(times as Array<number>)) : undefined
    }, 60_000, 200)
    const stormAtQuietDone = await Promise.all(storm.map(completedAt))

    const stormDone = await eventually("the storm tenants' full syncs", async () => {
      const times = await Promise.all(storm.map(completedAt))
      return times.every((x) => x !== null) ? Math.max(...(times as Array<number>)) : undefined
    }, 120_000, 500)
    const calls = (await suite.control.calls({ operation: "product/list", limit: 200_000 })).calls
    const lockedCalls = calls.filter((c) => c.locked)
    const err429 = calls.filter((c) => c.outcome === "ERR_429")
    const stormIds = new Set(storm.map((t) => t.appId))
    const expected = await Promise.all(storm.map(async (t) => (await suite.control.business(t.businessId)).counts?.products))
    // A finished sync has appended every page to the log; the read models follow the log
    // asynchronously, so they converge shortly after (under a loaded CI machine, seconds).
    const readCounts = () => Promise.all(storm.map(async (t) => (await admin(url, `/admin/tenants/${t.appId}/${t.businessId}`)).body.counts.products as number))
    const atDone = await readCounts()
    const converged = await eventually("the storm tenants' read models", async () => {
      const now = await readCounts()
      return now.every((n, i) => n === expected[i]) ? now : undefined
    }, 30_000, 250).catch(() => undefined)
    const counts = converged ?? await readCounts()
    console.log(`[storm] calls=${calls.length} ok=${calls.filter((c) => c.outcome === "ok").length} ERR_429=${err429.length} (storm tenants ${err429.filter((c) => stormIds.has(c.appId ?? "")).length}, before the quiet tenants came ${err429.filter((c) => c.at < stormOn).length}, after they were done ${err429.filter((c) => c.at > quietDone).length}) locked-arrivals=${lockedCalls.length}; quiet tenants added ${stormOn - started} ms in, done ${quietDone - stormOn} ms later, storm tenants after ${stormDone - started} ms; storm products ${atDone.join("/")} when the syncs finished, ${counts.join("/")} after, of ${expected.join("/")}`)
    assert.strictEqual(lockedCalls.length, 0, `calls reached the simulator during a lock: ${JSON.stringify(lockedCalls.slice(0, 3))}`)
    // The storm began before the quiet tenants arrived (they were added after the first
    // ERR_429) and still went on after they had finished.
    assert.isAbove(err429.filter((c) => c.at > quietDone).length, 0, "the storm went on after the quiet tenants finished")
    assert.isTrue(stormAtQuietDone.some((x) => x === null), "a storm tenant was still throttled when every quiet tenant had finished")
    assert.isBelow(quietDone, stormDone)
    assert.deepStrictEqual(counts, expected, "the throttled tenants still got everything")
  })
})
