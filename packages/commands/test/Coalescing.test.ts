import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { Effect } from "effect"
import { CommandEngine } from "../src/CommandEngine.ts"
import { engineLayer, tempLog, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  const t = await sim.control.createTenant({ products: 5 })
  tenant = { appId: String(t.app.appId), businessId: String(t.business.businessId) }
  tokens.set(`${tenant.appId}:${tenant.businessId}`, t.token.accessToken)
})
afterAll(() => sim.close())

const admin = { type: "admin" } as const
/** A full product as an integration sends it. */
const product = (i: number) => ({
  appProductId: `SUP-${i}`,
  name: `Áo thun cotton ${i}`,
  code: `AT${i}`,
  barcode: `893${String(i).padStart(10, "0")}`,
  price: 150_000 + i,
  importPrice: 90_000,
  status: 1,
  unit: "cái",
  description: "Hàng nhập từ nhà cung cấp mới"
})
const callsOf = (operation: string, sinceMs: number) =>
  Effect.promise(() => sim.control.calls({ operation, sinceMs, limit: 10_000 })).pipe(Effect.map((r) => r.calls))

describe("CommandEngine coalescing", () => {
  it.live("queued product.add go out as calls of up to 100, split back by appProductId; an item refused fails alone", () =>
    Effect.gen(function*() {
      const engine = yield* CommandEngine
      const since = Date.now()
      // 300 products at once, one with a name the service refuses (more than 255 characters).
      const submitted = yield* Effect.forEach(Array.from({ length: 300 }, (_, i) => i), (i) =>
        engine.submit({
          tenant,
          kind: "product.add",
          payload: i === 137 ? { ...product(i), name: "x".repeat(300) } : product(i),
          requestedBy: admin,
          idempotencyKey: `p-${i}`
        }), { concurrency: "unbounded" })
      const outcomes = yield* Effect.forEach(submitted, (s) => engine.outcome(tenant, s.command.id), { concurrency: "unbounded" })
      const refused = outcomes.filter((c) => c.state !== "confirmed")
      assert.deepStrictEqual(refused.map((c) => [c.idempotencyKey, c.state, c.reason?.code]), [["p-137", "failed", "ERR_INVALID_FORM_FIELDS"]])
      assert.match(refused[0]!.reason!.message, /name/)
      const counts = yield* Effect.promise(() =>
        sim.control.countEffects(tenant.businessId, { kind: "product.add", keys: outcomes.map((c) => (c.payload as { appProductId: string }).appProductId) })
      )
      for (const c of outcomes) {
        const key = (c.payload as { appProductId: string }).appProductId
        assert.strictEqual(counts.keys[key], c.idempotencyKey === "p-137" ? 0 : 1, key)
      }
      // Each command has its own product's id, as the service answered it.
      const ids = new Set(outcomes.filter((c) => c.state === "confirmed").map((c) => c.entityId))
      assert.strictEqual(ids.size, 299)
      assert.notInclude([...ids], undefined)
      const calls = yield* callsOf("product/add", since)
      const ok = calls.filter((c) => c.outcome === "ok")
      // 299 products: 3 calls at best; the refused call carried its 100 again without the bad one.
      assert.isAtMost(ok.length, 4, `calls: ${calls.map((c) => c.outcome).join(",")}`)
      assert.strictEqual(calls.filter((c) => c.outcome === "ERR_INVALID_FORM_FIELDS").length, 1)
      assert.isAtLeast(299 / ok.length, 74)
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))), 60_000)

  it.live("customer.add of one tenant coalesced, split back by mobile; two with one mobile never share a call", () =>
    Effect.gen(function*() {
      const engine = yield* CommandEngine
      const since = Date.now()
      const customers = Array.from({ length: 120 }, (_, i) => ({ name: `Khách ${i}`, mobile: `09120${String(i).padStart(5, "0")}`, address: "12 Lê Lợi, Quận 1" }))
      // The same mobile under another key: the service keys customers by mobile (an update).
      const twin = { ...customers[5]!, name: "Khách năm (đổi tên)" }
      const submitted = yield* Effect.forEach([...customers, twin].map((payload, i) => ({ payload, i })), ({ i, payload }) =>
        engine.submit({ tenant, kind: "customer.add", payload, requestedBy: admin, idempotencyKey: `c-${i}` }), { concurrency: "unbounded" })
      const outcomes = yield* Effect.forEach(submitted, (s) => engine.outcome(tenant, s.command.id), { concurrency: "unbounded" })
      assert.deepStrictEqual(outcomes.filter((c) => c.state !== "confirmed").map((c) => c.idempotencyKey), [])
      assert.strictEqual(outcomes[5]!.entityId, outcomes[120]!.entityId, "the twin updated the same customer")
      const calls = (yield* callsOf("customer/add", since)).filter((c) => c.outcome === "ok")
      assert.isAtMost(calls.length, 3)
      const counts = yield* Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind: "customer.add", keys: customers.map((c) => c.mobile) }))
      for (const c of customers) assert.strictEqual(counts.keys[c.mobile], 1, c.mobile)
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))), 60_000)

  it.live("a lost call's items are read back together: one list read for 60 items, each confirmed once", () =>
    Effect.gen(function*() {
      // A tenant of its own: the window read sees only this call's products.
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 1 }))
      const own = { appId: String(t.app.appId), businessId: String(t.business.businessId) }
      tokens.set(`${own.appId}:${own.businessId}`, t.token.accessToken)
      yield* Effect.promise(() => sim.control.addFault({ kind: "lostAnswer", operation: "product/add", businessId: own.businessId, count: 1 }))
      const engine = yield* CommandEngine
      const since = Date.now()
      const submitted = yield* Effect.forEach(Array.from({ length: 60 }, (_, i) => 1000 + i), (i) =>
        engine.submit({ tenant: own, kind: "product.add", payload: product(i), requestedBy: admin, idempotencyKey: `lost-${i}` }), { concurrency: "unbounded" })
      const outcomes = yield* Effect.forEach(submitted, (x) => engine.outcome(own, x.command.id), { concurrency: "unbounded" })
      assert.deepStrictEqual([...new Set(outcomes.map((c) => `${c.state}/${c.confirmedBy}`))], ["confirmed/readBack"])
      assert.isTrue(outcomes.every((c) => c.entityId !== undefined && /60 items read together/.test(c.evidence ?? "")), outcomes[0]!.evidence)
      const adds = (yield* callsOf("product/add", since)).filter((c) => c.businessId === own.businessId)
      assert.strictEqual(adds.length, 1, "one call, its answer lost, nothing sent again")
      const reads = (yield* callsOf("product/list", since)).filter((c) => c.businessId === own.businessId)
      assert.strictEqual(reads.length, 1, "one read for the 60 items")
      const counts = yield* Effect.promise(() =>
        sim.control.countEffects(own.businessId, { kind: "product.add", keys: outcomes.map((c) => (c.payload as { appProductId: string }).appProductId) })
      )
      assert.isTrue(Object.values(counts.keys).every((n) => n === 1), JSON.stringify(counts.keys))
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))), 30_000)
})
