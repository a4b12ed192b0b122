import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Simulator, SimulatorControl } from "../src/index.ts"
import { call, start } from "./helpers.ts"

describe("Simulator lifecycle and control API", () => {
  it.effect("starts on an ephemeral port in a scope and stops when the scope closes", () =>
    Effect.gen(function*() {
      const url = yield* Effect.scoped(Effect.gen(function*() {
        const sim = yield* Simulator.start({ port: 0, products: 10 })
        assert.notStrictEqual(sim.port, 0)
        const demo = yield* Effect.promise(() => new SimulatorControl(sim.url).demo())
        assert.deepStrictEqual(demo, { ...sim.demo! })
        assert.strictEqual(demo.posBaseUrl, `${sim.url}/pos`)
        assert.strictEqual(demo.vpageBaseUrl, `${sim.url}/vpage`)
        return sim.url
      }))
      const after = yield* Effect.promise(() => fetch(`${url}/_sim/health`).then(() => "up", () => "down"))
      assert.strictEqual(after, "down")
    }))

  it("serves the demo as JSON integers at GET /_sim/demo, with big ids when asked", async () => {
    const sim = await start({ products: 10, bigIds: true })
    try {
      const text = await (await fetch(`${sim.url}/_sim/demo`)).text()
      assert.match(text, /^\{"appId":100001,"businessId":9007199254940993,"accessToken":"demo-[0-9a-f]+","verifyToken":/)
      const res = await call(sim, sim.demo!, "product/list", {})
      assert.match(res.text, /"id":9007199254740993,/)
    } finally {
      await sim.close()
    }
  })

  it("is deterministic from the seed and reset returns to the start state", async () => {
    const a = await start({ products: 100, seed: 42 })
    const b = await start({ products: 100, seed: 42 })
    try {
      const pa = await call(a, a.demo!, "product/list", {})
      assert.strictEqual(pa.text, (await call(b, b.demo!, "product/list", {})).text)
      assert.strictEqual(a.demo!.accessToken, b.demo!.accessToken)
      await a.control.deleteProduct(a.demo!.businessId, "100001")
      await a.control.createApp()
      await a.control.reset()
      assert.strictEqual((await call(a, a.demo!, "product/list", {})).text, pa.text)
      assert.strictEqual((await a.control.calls()).calls.length, 1)
    } finally {
      await a.close()
      await b.close()
    }
  })

  it("answers bad control input with 400 and a message naming the field", async () => {
    const sim = await start({ products: 10 })
    try {
      const res = await fetch(`${sim.url}/_sim/businesses`, { method: "POST", body: JSON.stringify({ products: "many" }) })
      assert.strictEqual(res.status, 400)
      assert.match((await res.json() as { error: string }).error, /products/)
      const missing = await fetch(`${sim.url}/_sim/apps/424242`)
      assert.strictEqual(missing.status, 404)
    } finally {
      await sim.close()
    }
  })

  it("starts a 1,000,000-product business quickly and serves its last page", async () => {
    const t0 = Date.now()
    const sim = await start({ products: 1_000_000 })
    try {
      assert.isBelow(Date.now() - t0, 1000)
      const res = await call(sim, sim.demo!, "product/list", { paginator: { size: 5, sort: { id: "desc" } } })
      assert.strictEqual(res.json.data[0].appProductId.startsWith("P-"), true)
      assert.isTrue(Number(res.json.data[0].id) > 100001 + 999_000)
    } finally {
      await sim.close()
    }
  })
})
