/**
 * Lost answers resolved from the copy (docs/architecture.md §4.31): the read models map
 * appOrderId and appProductId to the service's ids, so a duplicate refusal of order/add and an
 * in-doubt product/add resolve with no page scan of the service.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EventLog } from "@ocs/event-log"
import { EngineRecord, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { CommerceClient } from "@ocs/transport"
import { Effect, Layer, Stream } from "effect"
import * as NodePath from "node:path"
import * as Ledger from "../src/CommandLedger.ts"
import { CommandCopy, CommandEngine } from "../src/CommandEngine.ts"
import { engineLayer, tempLog, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let productId: string

const post = (operation: string, body: unknown) =>
  fetch(`${sim.posBaseUrl}/v3.0/${operation}?appId=${tenant.appId}&businessId=${tenant.businessId}`, {
    method: "POST",
    headers: { Authorization: tokens.get(`${tenant.appId}:${tenant.businessId}`)!, "Content-Type": "application/json" },
    body: JSON.stringify(body)
  }).then((r) => r.json() as Promise<{ code: number; data: any }>)

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  const t = await sim.control.createTenant({ products: 5, orders: 0 })
  tenant = { appId: String(t.app.appId), businessId: String(t.business.businessId) }
  tokens.set(`${tenant.appId}:${tenant.businessId}`, t.token.accessToken)
  productId = String((await post("product/list", { paginator: { size: 1 } })).data[0].id)
})
afterAll(() => sim.close())

const admin = { type: "admin" } as const

describe("lost answers resolved from the copy", () => {
  it.live("order.add refused as a duplicate and an in-doubt product.add: the ids from the copy, no list read", () => {
    const log = tempLog()
    const rmLayer = ReadModels.ReadModels.layer({ filename: NodePath.join(NodePath.dirname(log), "read-models.db") })
    const copy = CommandCopy.layerReadModels.pipe(Layer.provide(rmLayer))
    const order = { channel: { appOrderId: "PANCAKE-77" }, shippingAddress: { name: "Lan", mobile: "0912000001" }, products: [{ id: productId, price: 1000, quantity: 1 }] }
    const product = { appProductId: "SUP-77", name: "Giày vải", price: 320_000 }
    return Effect.gen(function*() {
      // An engine died after sending both: the service applied them, their answers never came back.
      const made = yield* Effect.promise(() => Promise.all([post("order/add", order), post("product/add", [product])]))
      const orderId = String(made[0].data.id)
      const newProductId = String(made[1].data[0].id)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Ledger.append(tenant, { state: "requested", command: "o-77", kind: "order.add", payload: order, requestedBy: admin, idempotencyKey: "o-77", fingerprint: "x" })
        yield* Ledger.append(tenant, { state: "sent", command: "o-77", attempt: 1 })
        yield* Ledger.append(tenant, { state: "requested", command: "p-77", kind: "product.add", payload: product, requestedBy: admin, idempotencyKey: "p-77", fingerprint: "y" })
        yield* Ledger.append(tenant, { state: "sent", command: "p-77", attempt: 1 })
        // The copy: both as a pull brought them.
        const client = yield* CommerceClient.CommerceClient
        const access = CommerceClient.tenantAccess(tenant.appId, tenant.businessId, tokens.get(`${tenant.appId}:${tenant.businessId}`)!)
        const eventLog = yield* EventLog.EventLog
        for (const op of [Operation.orderList, Operation.productList]) {
          const pages = yield* Stream.runCollect(client.pages(access, op as typeof Operation.orderList, {}))
          yield* eventLog.append(pages.map((p) => ({
            ...tenant,
            source: "sync" as const,
            type: `${op.resource}/list.page`,
            body: p.text,
            meta: EngineRecord.entityMeta(op.entity!) as Record<string, unknown>
          })))
        }
        yield* (yield* ReadModels.ReadModels).catchUp()
      }).pipe(Effect.provide(Layer.mergeAll(engineLayer(sim, log, new Map()), rmLayer).pipe(Layer.orDie))))

      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const [o, p] = yield* Effect.scoped(Effect.gen(function*() {
        const engine = yield* CommandEngine
        return yield* Effect.all([engine.outcome(tenant, "o-77"), engine.outcome(tenant, "p-77")])
      }).pipe(Effect.provide(engineLayer(sim, log, tokens, {}, copy))))
      assert.strictEqual(o.state, "confirmed")
      assert.strictEqual(o.entityId, orderId)
      assert.match(o.evidence ?? "", /refused as a duplicate.*the copy maps order PANCAKE-77/s)
      assert.strictEqual(p.state, "confirmed")
      assert.strictEqual(p.entityId, newProductId)
      assert.strictEqual(p.attempts, 1, "never sent again")
      const calls = (yield* Effect.promise(() => sim.control.calls({ since, limit: 100 }))).calls.map((c) => `${c.operation} ${c.outcome}`)
      // The order was sent again (the service refuses a used appOrderId: harmless), and nothing else.
      assert.deepStrictEqual(calls, ["order/add ERR_INVALID_FORM_FIELDS"])
      const counts = yield* Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind: "order.add", keys: ["PANCAKE-77"] }))
      assert.strictEqual(counts.keys["PANCAKE-77"], 1)
    })
  }, 30_000)
})
