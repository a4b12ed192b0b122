import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, eventually, start } from "./helpers.ts"

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
    assert.deepStrictEqual(counted.lost.map((e) => e.key), ["LOST-1"], "the ledger knows the answer was lost")
    // A blind retry is refused as a duplicate: the effect is not applied twice.
    const again = await call(sim, demo, "order/add", order("LOST-1", productId))
    assert.strictEqual(again.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.match(again.json.messages["channel.appOrderId"], /already exists/)
    const log = await sim.control.calls({ outcome: "fault:lostAnswer" })
    assert.strictEqual(log.calls.length, 1)
  })

  it("unlistedId answers a write as applied with an id no list shows", async () => {
    await sim.control.addFault({ kind: "unlistedId", operation: "product/add", count: 1 })
    const answer = await call(sim, demo, "product/add", [{ appProductId: "UNLISTED-1", name: "Khăn", price: 1000 }])
    assert.strictEqual(answer.json.code, 1)
    const said = String(answer.json.data[0].id)
    assert.strictEqual(answer.json.data[0].appProductId, "UNLISTED-1")
    const listed = await call(sim, demo, "product/list", { filters: { ids: [Number(said)] } })
    assert.strictEqual(listed.json.code, 1, JSON.stringify(listed.json))
    assert.deepStrictEqual(listed.json.data, [], "the answered id is listed by nothing")
    // The effect itself was applied, under its own id, once.
    const effects = (await sim.control.effects(demo.businessId, "product.add")).effects.filter((e) => e.key === "UNLISTED-1")
    assert.deepStrictEqual(effects.map((e) => e.answer), ["answered"])
    assert.notStrictEqual(effects[0]!.id, said)
    assert.strictEqual((await sim.control.calls({ outcome: "fault:unlistedId" })).calls.length, 1)
    // The fault fired once: the next add is answered with its real id.
    const next = await call(sim, demo, "product/add", [{ appProductId: "UNLISTED-2", name: "Khăn", price: 1000 }])
    const real = (await sim.control.effects(demo.businessId, "product.add")).effects.find((e) => e.key === "UNLISTED-2")
    assert.strictEqual(String(next.json.data[0].id), real!.id)
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

  it("a caller that gives up on a slow answer: the effect stays, recorded as lost", async () => {
    await sim.control.addFault({ kind: "latency", ms: 400, phase: "after", operation: "order/add", count: 1 })
    const url = `${sim.posBaseUrl}/v3.0/order/add?appId=${demo.appId}&businessId=${demo.businessId}`
    let timedOut = false
    try {
      await fetch(url, {
        method: "POST",
        headers: { authorization: demo.accessToken, "content-type": "application/json" },
        body: JSON.stringify(order("GONE-1", productId)),
        signal: AbortSignal.timeout(100)
      })
    } catch {
      timedOut = true
    }
    assert.isTrue(timedOut)
    const counted = await eventually(async () => {
      const c = await sim.control.countEffects(demo.businessId, { kind: "order.add", keys: ["GONE-1"] })
      return c.lost.some((e) => e.key === "GONE-1") ? c : undefined
    })
    assert.strictEqual(counted.keys["GONE-1"], 1)
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

  it("a fault's own seed gives the same draws whatever rules came before", async () => {
    const run = async (before: number) => {
      await sim.control.reset()
      const who = sim.demo!
      for (let i = 0; i < before; i++) await sim.control.addFault({ kind: "latency", ms: 0, operation: "order/list" })
      await sim.control.addFault({ kind: "status", status: 503, operation: "customer/add", probability: 0.5, seed: 4242 })
      const out: Array<number> = []
      for (let i = 0; i < 16; i++) out.push((await call(sim, who, "customer/add", [{ name: "S", mobile: `09200${String(i).padStart(5, "0")}` }])).status)
      return out
    }
    const a = await run(0)
    assert.deepStrictEqual(await run(3), a)
    assert.isTrue(a.includes(503) && a.includes(200), a.join(","))
  })

  it("mixed faults on movements: each answered or lost write applied once, each 5xx not at all", async () => {
    await sim.control.reset()
    const who = sim.demo!
    await sim.control.addFault({ kind: "lostAnswer", operation: "inventory/importother", probability: 0.2 })
    await sim.control.addFault({ kind: "status", status: 502, operation: "inventory/importother", probability: 0.1 })
    const outcome = new Map<string, string>()
    for (let i = 0; i < 60; i++) {
      const marker = `[m:${i}]`
      const a = await attempt(sim, who, "inventory/importother", { depotId: 1, description: `restock ${marker}`, products: [{ id: productId, quantity: 1 }] })
      outcome.set(marker, a === "lost" ? "lost" : a.status === 502 ? "5xx" : a.json.code === 1 ? "ok" : a.text)
    }
    const counts = await sim.control.countEffects(who.businessId, { kind: "inventory.importOther", markers: [...outcome.keys()] })
    const seen = new Set(outcome.values())
    assert.isTrue(seen.has("ok") && seen.has("lost") && seen.has("5xx"), [...seen].join(","))
    for (const [marker, o] of outcome) assert.strictEqual(counts.markers[marker], o === "5xx" ? 0 : 1, `${marker} ${o}`)
    // The ledger's lost answers are exactly the calls that got no answer.
    const lost = [...outcome].filter(([, o]) => o === "lost").map(([m]) => `restock ${m}`)
    assert.deepStrictEqual(counts.lost.map((e) => e.key), lost)
    const listed = await sim.control.effects(who.businessId, "inventory.importOther")
    assert.isTrue(listed.effects.every((e) => e.answer === (lost.includes(e.key) ? "lost" : "answered")))
  })

  it("a lost answer to 100 products: all 100 stored once", async () => {
    await sim.control.addFault({ kind: "lostAnswer", operation: "product/add", count: 1 })
    const items = Array.from({ length: 100 }, (_, i) => ({ appProductId: `LP-${i}`, name: `Lost ${i}`, price: 1 }))
    assert.strictEqual(await attempt(sim, demo, "product/add", items), "lost")
    const counts = await sim.control.countEffects(demo.businessId, { kind: "product.add", keys: items.map((p) => p.appProductId) })
    assert.isTrue(Object.values(counts.keys).every((n) => n === 1))
    assert.strictEqual(Object.keys(counts.keys).length, 100)
  })
})
