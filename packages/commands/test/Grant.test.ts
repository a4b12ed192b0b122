/**
 * Commands checked against the grant (docs/architecture.md §4.31, §4.32): a business that
 * granted only products and stock, and one of its three depots, has a command needing another
 * permission or naming another depot refused before anything is stored or sent; one inside the
 * grant goes out and takes effect. The simulator enforces the same grant on its token
 * (ERR_403, ERR_INVALID_DEPOT_ID), so a check that let them through would fail on the answer.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EventLog } from "@ocs/event-log"
import { EngineRecordCommands } from "@ocs/protocol"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { Effect, Stream } from "effect"
import { CommandEngine } from "../src/CommandEngine.ts"
import * as Grant from "../src/Grant.ts"
import { engineLayer, type Grants, tempLog, tenantWithProduct, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
const grants: Grants = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let productId: string

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  const made = await tenantWithProduct(sim, tokens, { products: 3, orders: 0, permissions: ["product", "inventory"], depots: [1] })
  tenant = made.tenant
  productId = made.productId
  grants.set(`${tenant.appId}:${tenant.businessId}`, { permissions: ["product", "inventory"], depots: ["1"] })
})
afterAll(() => sim.close())

const admin = { type: "admin" } as const

describe("commands checked against the grant", () => {
  it("the kinds' permissions are the reference's", () => {
    assert.deepStrictEqual(
      ["product.add", "product.edit", "order.add", "order.edit", "customer.add", "bill.addRetail", "inventory.importOther"].map((k) => Grant.permissionOf(k as never)),
      ["product", "product", "order", "order", "customer", "bill", "inventory"]
    )
  })

  it.live("a permission or a depot outside the grant is refused before any call; inside it, sent", () =>
    Effect.gen(function*() {
      const engine = yield* CommandEngine
      const log = yield* EventLog.EventLog
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const order = yield* Effect.flip(engine.submit({
        tenant,
        kind: "order.add",
        payload: { channel: { appOrderId: "G-1" }, shippingAddress: { name: "Lan", mobile: "0912345678" }, products: [{ id: productId, price: 10_000, quantity: 1 }] },
        requestedBy: admin,
        idempotencyKey: "g-order"
      }))
      assert.strictEqual(order._tag, "NotGranted")
      assert.strictEqual((order as Grant.NotGranted).permission, "order")
      const depot = yield* Effect.flip(engine.submit({
        tenant,
        kind: "inventory.importOther",
        payload: { depotId: 2, products: [{ id: productId, quantity: 3 }], description: "kiểm kê" },
        requestedBy: admin,
        idempotencyKey: "g-depot-2"
      }))
      assert.strictEqual(depot._tag, "NotGranted")
      assert.strictEqual((depot as Grant.NotGranted).depotId, "2")
      assert.strictEqual((depot as Grant.NotGranted).path, "payload.depotId")
      const calls = yield* Effect.promise(() => sim.control.calls({ since, limit: 100 }))
      assert.strictEqual(calls.calls.length, 0, "no call for a command outside the grant")
      const stored = yield* Stream.runCollect(log.read({ tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE] }))
      assert.strictEqual(stored.length, 0, "nothing stored")
      // Inside the grant: depot 1, stock permission.
      const ok = yield* engine.submit({
        tenant,
        kind: "inventory.importOther",
        payload: { depotId: 1, products: [{ id: productId, quantity: 3 }], description: "kiểm kê" },
        requestedBy: admin,
        idempotencyKey: "g-depot-1"
      })
      const done = yield* engine.outcome(tenant, ok.command.id)
      assert.strictEqual(done.state, "confirmed", JSON.stringify(done))
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens, {}, undefined, grants))), 30_000)
})
