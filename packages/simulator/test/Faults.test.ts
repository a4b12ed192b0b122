import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

describe("API faults", () => {
  let sim: RunningSimulator
  let demo: Caller
  beforeAll(async () => {
    sim = await start({ products: 50, seed: 7 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  it("injects 5xx answers a given number of times, scoped by operation", async () => {
    await sim.control.addFault({ kind: "status", status: 503, operation: "product/list", count: 2 })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await call(sim, demo, "product/list", {})).status)
    assert.deepStrictEqual(statuses, [503, 503, 200])
    assert.strictEqual((await call(sim, demo, "order/list", {})).status, 200)
    const log = await sim.control.calls({ outcome: "fault:status" })
    assert.strictEqual(log.calls.length, 2)
  })

  it("adds latency and resets connections", async () => {
    await sim.control.addFault({ kind: "latency", ms: 150, count: 1 })
    const t0 = Date.now()
    await call(sim, demo, "product/list", {})
    assert.isTrue(Date.now() - t0 >= 140)
    await sim.control.addFault({ kind: "reset", count: 1 })
    let failed = false
    try {
      await call(sim, demo, "product/list", {})
    } catch {
      failed = true
    }
    assert.isTrue(failed, "the connection was destroyed")
    assert.strictEqual((await call(sim, demo, "product/list", {})).json.code, 1)
  })

  it("answers malformed bodies for hostile-input tests", async () => {
    await sim.control.addFault({ kind: "malformed", variant: "nonJson", count: 1 })
    await sim.control.addFault({ kind: "malformed", variant: "hugeNumbers", count: 1 })
    const html = await call(sim, demo, "product/list", {})
    assert.isUndefined(html.json)
    const huge = await call(sim, demo, "product/list", {})
    assert.match(huge.text, /"id":1000000000/)
    assert.match(huge.text, /1e999/)
  })

  it("sets the HTTP status of API failures per fault (default 200)", async () => {
    const bad = { ...demo, accessToken: "nope" }
    assert.strictEqual((await call(sim, bad, "product/list", {})).status, 200)
    await sim.control.addFault({ kind: "httpStatus", status: 401, errorCode: "ERR_INVALID_ACCESS_TOKEN" })
    assert.strictEqual((await call(sim, bad, "product/list", {})).status, 401)
    assert.strictEqual((await call(sim, demo, "product/list", { paginator: { size: 1000 } })).status, 200)
    await sim.control.clearFaults()
  })

  it("fires probabilistic faults reproducibly from the seed", async () => {
    const run = async () => {
      const other = await start({ products: 10, seed: 7 })
      try {
        await other.control.addFault({ kind: "status", probability: 0.5 })
        const out: Array<number> = []
        for (let i = 0; i < 12; i++) out.push((await call(other, other.demo!, "product/list", {})).status)
        return out
      } finally {
        await other.close()
      }
    }
    const a = await run()
    assert.deepStrictEqual(await run(), a)
    assert.isTrue(a.includes(500) && a.includes(200))
  })

  it("refuses an unknown fault kind with a clear message", async () => {
    try {
      await sim.control.addFault({ kind: "explode" } as never)
      assert.fail("expected a 400")
    } catch (error) {
      assert.match(String(error), /kind: expected one of/)
    }
  })
})
