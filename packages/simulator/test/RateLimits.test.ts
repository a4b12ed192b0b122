import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, sleep, start } from "./helpers.ts"

// A compressed window: 10 calls per 1 s, locks of 1 s growing by 0.5 s per locked call.
const limits = { limit: 10, windowMs: 1000, lockMs: 1000, lockGrowthMs: 500 }

describe("rate limits (compressed window)", () => {
  let sim: RunningSimulator
  const tenant = async (): Promise<Caller> => {
    const t = await sim.control.createTenant({ products: 50, orders: 10 })
    return { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
  }
  const burst = (who: Caller, n: number, op = "product/list") =>
    Promise.all(Array.from({ length: n }, () => call(sim, who, op, {})))
  beforeAll(async () => {
    sim = await start({ products: 50, rateLimit: limits })
  })
  afterAll(() => sim.close())

  it("locks with ERR_429, extends the lock on calls during it, and leaves other keys alone", async () => {
    const who = await tenant()
    const other = await tenant()
    const ok = await burst(who, 10)
    assert.isTrue(ok.every((r) => r.json.code === 1))
    const over = await call(sim, who, "product/list", {})
    assert.strictEqual(over.json.errorCode, "ERR_429")
    assert.strictEqual(over.json.message, "Your app exceeded the API Rate Limit")
    assert.isUndefined(over.json.messages)
    assert.isTrue(Number.isInteger(over.json.data.lockedSeconds) && over.json.data.lockedSeconds >= 1)
    const lockEnd = (await sim.control.rateLimits()).locks[0]!.lockedUntilMs
    assert.isTrue(over.json.data.unlockedAt * 1000 >= lockEnd, "unlockedAt never understates the lock")

    const during = await call(sim, who, "product/list", {})
    assert.strictEqual(during.json.errorCode, "ERR_429")
    const extended = (await sim.control.rateLimits()).locks.find((l) => l.key.startsWith(`${who.appId}|`))!
    assert.strictEqual(extended.lockedUntilMs, lockEnd + 500)
    assert.isTrue(during.json.data.unlockedAt >= over.json.data.unlockedAt)

    // another URL of the same tenant, and another business, are not blocked
    assert.strictEqual((await call(sim, who, "order/list", {})).json.code, 1)
    assert.strictEqual((await call(sim, other, "product/list", {})).json.code, 1)

    // the call log records which calls arrived during a lock
    const log = await sim.control.calls({ appId: who.appId, operation: "product/list" })
    const outcomes = log.calls.map((c) => [c.outcome, c.locked])
    assert.deepStrictEqual(outcomes.slice(-2), [["ERR_429", false], ["ERR_429", true]])

    // the lock ends at its end time
    await sleep(extended.lockedUntilMs - Date.now() + 20)
    assert.strictEqual((await call(sim, who, "product/list", {})).json.code, 1)
  })

  it("counts in a sliding window: a burst across a window edge is caught, a spaced client passes", async () => {
    const edge = await tenant()
    await burst(edge, 10)
    await sleep(600) // in a fixed 1 s window this would be the next window
    const r = await call(sim, edge, "product/list", {})
    assert.strictEqual(r.json.errorCode, "ERR_429")

    const polite = await tenant()
    await burst(polite, 10)
    await sleep(1020) // any 1 s span now holds at most 10 calls
    const again = await burst(polite, 10)
    assert.isTrue(again.every((x) => x.json.code === 1))
  })

  it("applies per-operation overrides and can be switched off", async () => {
    const who = await tenant()
    await sim.control.setRateLimits({ operations: { "order/list": { limit: 3 } } })
    try {
      const orders = await burst(who, 4, "order/list")
      assert.strictEqual(orders.filter((r) => r.json.errorCode === "ERR_429").length, 1)
      assert.isTrue((await burst(who, 5)).every((r) => r.json.code === 1))
      await sim.control.setRateLimits({ enabled: false })
      assert.isTrue((await burst(who, 30)).every((r) => r.json.code === 1))
    } finally {
      await sim.control.resetRateLimits()
    }
  })

  it("skews unlockedAt on demand (to prove clients add an allowance)", async () => {
    const who = await tenant()
    await sim.control.addFault({ kind: "skewUnlockedAt", seconds: 5, appId: who.appId })
    await burst(who, 10)
    const over = await call(sim, who, "product/list", {})
    const lock = (await sim.control.rateLimits()).locks.find((l) => l.key.startsWith(`${who.appId}|`))!
    assert.isTrue(over.json.data.unlockedAt * 1000 < lock.lockedUntilMs - 3000)
    await sim.control.clearFaults()
  })
})
