import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

const order = (appOrderId: string, productId: string) => ({
  channel: { appOrderId },
  shippingAddress: { name: "Lan", mobile: "0912000001" },
  products: [{ id: productId, price: 1000, quantity: 1 }]
})

/** Calls and reports "lost" when the connection was cut without an answer. */
const attempt = async (sim: RunningSimulator, who: Caller, operation: string, body: unknown) => {
  try {
    return await call(sim, who, operation, body)
  } catch {
    return "lost" as const
  }
}

describe("write faults", () => {
  let sim: RunningSimulator
  let demo: Caller
  let productId: string
  beforeAll(async () => {
    sim = await start({ products: 50, seed: 11 })
    demo = sim.demo!
    productId = String((await call(sim, demo, "product/list", { paginator: { size: 1 } })).json.data[0].id)
  })
  afterAll(() => sim.close())

  it("lostAnswer applies the write, then cuts the connection without a response", async () => {
    await sim.control.addFault({ kind: "lostAnswer", operation: "order/add", count: 1 })
    assert.strictEqual(await attempt(sim, demo, "order/add", order("LOST-1", productId)), "lost")
    const counted = await sim.control.countEffects(demo.businessId, { kind: "order.add", keys: ["LOST-1"] })
    assert.strictEqual(counted.keys["LOST-1"], 1, "the order exists once although no answer came")
    // A blind retry is refused as a duplicate: the effect is not applied twice.
    const again = await call(sim, demo, "order/add", order("LOST-1", productId))
    assert.strictEqual(again.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.match(again.json.messages["channel.appOrderId"], /already exists/)
    const log = await sim.control.calls({ outcome: "fault:lostAnswer" })
    assert.strictEqual(log.calls.length, 1)
  })

  it("a 5xx before applying leaves no effect", async () => {
    await sim.control.addFault({ kind: "status", status: 503, operation: "customer/add", count: 1 })
    const answer = await call(sim, demo, "customer/add", [{ name: "Minh", mobile: "0987000111" }])
    assert.strictEqual(answer.status, 503)
    const counted = await sim.control.countEffects(demo.businessId, { kind: "customer.add", keys: ["0987000111"] })
    assert.strictEqual(counted.keys["0987000111"], 0)
    const ok = await call(sim, demo, "customer/add", [{ name: "Minh", mobile: "0987000111" }])
    assert.strictEqual(ok.json.code, 1)
  })

  it("a slow answer after the effect: the write is visible before the answer arrives", async () => {
    await sim.control.addFault({ kind: "latency", ms: 300, phase: "after", operation: "order/add", count: 1 })
    const t0 = Date.now()
    const pending = call(sim, demo, "order/add", order("SLOW-1", productId))
    await new Promise((r) => setTimeout(r, 120))
    const during = await sim.control.countEffects(demo.businessId, { kind: "order.add", keys: ["SLOW-1"] })
    assert.strictEqual(during.keys["SLOW-1"], 1)
    const answer = await pending
    assert.strictEqual(answer.json.code, 1)
    assert.isAtLeast(Date.now() - t0, 280)
  })

  it("forced429 locks the URL as the budget does: refused, extended while locked, other URLs free", async () => {
    await sim.control.setRateLimits({ lockMs: 1500, lockGrowthMs: 500 })
    await sim.control.addFault({ kind: "forced429", operation: "order/add", count: 1 })
    const first = await call(sim, demo, "order/add", order("RL-1", productId))
    assert.strictEqual(first.json.errorCode, "ERR_429")
    assert.strictEqual(first.json.message, "Your app exceeded the API Rate Limit")
    const unlockedAt = first.json.data.unlockedAt as number
    const second = await call(sim, demo, "order/add", order("RL-1", productId))
    assert.strictEqual(second.json.errorCode, "ERR_429", "the lock holds for the next call")
    assert.isAtLeast(second.json.data.unlockedAt, unlockedAt, "a call during the lock does not shorten it")
    assert.strictEqual((await call(sim, demo, "customer/add", [{ name: "Hoa", mobile: "0987000222" }])).json.code, 1)
    const counted = await sim.control.countEffects(demo.businessId, { kind: "order.add", keys: ["RL-1"] })
    assert.strictEqual(counted.keys["RL-1"], 0)
    const locked = await sim.control.calls({ operation: "order/add", outcome: "ERR_429" })
    assert.strictEqual(locked.calls.length, 2)
    await sim.control.resetRateLimits()
  })

  it("probabilistic lost answers are reproducible from the seed, and every effect is counted once", async () => {
    const run = async () => {
      await sim.control.reset()
      const who = sim.demo!
      await sim.control.addFault({ kind: "lostAnswer", operation: "customer/add", probability: 0.3 })
      const outcomes: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const mobile = `09100${String(i).padStart(5, "0")}`
        const a = await attempt(sim, who, "customer/add", [{ name: `C${i}`, mobile }])
        outcomes.push(a === "lost" ? "lost" : String(a.json.code))
      }
      const counts = await sim.control.countEffects(who.businessId, { kind: "customer.add" })
      assert.strictEqual(counts.total, 20, "lost or not, each customer was created once")
      assert.deepStrictEqual(counts.duplicates, {})
      return outcomes
    }
    const a = await run()
    const b = await run()
    assert.deepStrictEqual(a, b)
    assert.isTrue(a.includes("lost") && a.includes("1"), a.join(","))
  })
})
