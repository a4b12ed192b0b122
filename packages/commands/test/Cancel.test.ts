import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { Effect } from "effect"
import { CommandEngine } from "../src/CommandEngine.ts"
import { engineLayer, tempLog, tenantWithProduct, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let productId: string

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  ;({ tenant, productId } = await tenantWithProduct(sim, tokens, { products: 3, orders: 0 }))
})
afterAll(() => sim.close())

describe("cancel and metrics", () => {
  it.live("a command not sent yet is cancelled and never sent; a sent one cannot be; metrics count by kind and state", () =>
    Effect.gen(function*() {
      const engine = yield* CommandEngine
      const since = Date.now()
      // One command at a time (concurrency 1): the last ones wait for their turn.
      const submitted = yield* Effect.forEach(Array.from({ length: 6 }, (_, i) => i), (i) =>
        engine.submit({ tenant, kind: "product.edit", payload: { id: productId, name: `Tên mới ${i}` }, requestedBy: { type: "admin" }, idempotencyKey: `edit-${i}` }))
      const cancelled = yield* engine.cancel(tenant, submitted[5]!.command.id, "admin")
      assert.strictEqual(cancelled.state, "cancelled")
      const outcomes = yield* Effect.forEach(submitted, (s) => engine.outcome(tenant, s.command.id))
      assert.deepStrictEqual(outcomes.map((c) => c.state), ["confirmed", "confirmed", "confirmed", "confirmed", "confirmed", "cancelled"])
      assert.strictEqual(outcomes[5]!.attempts, 0)
      const late = yield* Effect.flip(engine.cancel(tenant, submitted[0]!.command.id, "admin"))
      assert.strictEqual(late._tag, "NotCancellable")
      const calls = yield* Effect.promise(() => sim.control.calls({ operation: "product/edit", sinceMs: since, limit: 100 }))
      assert.strictEqual(calls.calls.length, 5, "the cancelled command never reached the service")
      const product = (yield* Effect.promise(() => sim.control.product(tenant.businessId, productId))) as { name: string }
      assert.strictEqual(product.name, "Tên mới 4")
      const metrics = yield* engine.metrics
      const of = (state: string) => metrics.byKindAndState.find((m) => m.kind === "product.edit" && m.state === state)?.count
      assert.strictEqual(of("confirmed"), 5)
      assert.strictEqual(of("cancelled"), 1)
      assert.strictEqual(metrics.inDoubt, 0)
      assert.strictEqual(metrics.laneQueue, 0)
      assert.strictEqual(metrics.laneBusy, 0)
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens, { concurrency: 1 }))))
})
