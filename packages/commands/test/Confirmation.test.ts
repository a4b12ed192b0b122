/**
 * Confirmation (docs/architecture.md §4.31): a command the service answered as applied is seen
 * when the copy shows its entity with the fields it set; not seen within the bound, a targeted
 * read decides, and one the service does not show is flagged.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EventLog } from "@ocs/event-log"
import { EngineRecord, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { CommerceClient } from "@ocs/transport"
import { Effect, Layer, Option, Stream } from "effect"
import * as NodePath from "node:path"
import type { Command } from "../src/Command.ts"
import { CommandCopy, CommandEngine } from "../src/CommandEngine.ts"
import { engineLayer, tempLog, tenantWithProduct, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let productId: string

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  ;({ tenant, productId } = await tenantWithProduct(sim, tokens, { products: 5, orders: 0 }))
})
afterAll(() => sim.close())

const admin = { type: "admin" } as const

/** The command once the engine decided whether its effect is seen. */
const settled = (id: string) =>
  Effect.gen(function*() {
    const engine = yield* CommandEngine
    for (let i = 0; i < 200; i++) {
      const c = yield* engine.get(tenant, id)
      if (Option.isSome(c) && c.value.seen !== undefined) return c.value
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.die(new Error(`command ${id}: its effect was never decided`))
  })

describe("confirmation by the copy", () => {
  it.live("seen in the copy; seen by a targeted read after the bound; flagged when the service does not show it", () => {
    const log = tempLog()
    const rmLayer = ReadModels.ReadModels.layer({ filename: NodePath.join(NodePath.dirname(log), "read-models.db") })
    const base = engineLayer(sim, log, tokens, { seenWithinMs: 1500 }, CommandCopy.layerReadModels.pipe(Layer.provide(rmLayer)))
    return Effect.gen(function*() {
      const engine = yield* CommandEngine
      const edit = yield* engine.submit({ tenant, kind: "product.edit", payload: { id: productId, name: "Áo khoác gió (mẫu mới)" }, requestedBy: admin, idempotencyKey: "edit-1" })
      const customer = yield* engine.submit({ tenant, kind: "customer.add", payload: { name: "Thu", mobile: "0988123456" }, requestedBy: admin, idempotencyKey: "cust-1" })
      const bill = yield* engine.submit({ tenant, kind: "bill.addRetail", payload: { depotId: 1, products: [{ id: productId, quantity: 1 }] }, requestedBy: admin, idempotencyKey: "bill-1" })
      const done = yield* Effect.all([edit, customer, bill].map((s) => engine.outcome(tenant, s.command.id)))
      assert.deepStrictEqual(done.map((c) => c.state), ["confirmed", "confirmed", "confirmed"])
      assert.deepStrictEqual(done.map((c) => c.seen), [undefined, undefined, undefined], "not seen yet: the copy has none of them")
      // The bill disappears from the service (deleted in the back office) before anyone saw it.
      yield* Effect.promise(() => sim.control.deleteBill(tenant.businessId, done[2]!.entityId!))
      // A pull brings the edited product into the copy.
      const client = yield* CommerceClient.CommerceClient
      const access = CommerceClient.tenantAccess(tenant.appId, tenant.businessId, tokens.get(`${tenant.appId}:${tenant.businessId}`)!)
      const pages = yield* Stream.runCollect(client.pages(access, Operation.productList, {}))
      yield* (yield* EventLog.EventLog).append(pages.map((p) => ({
        ...tenant,
        source: "sync" as const,
        type: "product/list.page",
        body: p.text,
        meta: EngineRecord.entityMeta(Operation.productList.entity!) as Record<string, unknown>
      })))
      yield* (yield* ReadModels.ReadModels).catchUp()
      const [e, c, b]: ReadonlyArray<Command> = yield* Effect.all([settled(edit.command.id), settled(customer.command.id), settled(bill.command.id)], { concurrency: 3 })
      assert.strictEqual(e.seen, "copy", e.evidence)
      assert.strictEqual(c.seen, "readBack", c.evidence)
      assert.match(c.evidence ?? "", /customer\/list .*0988123456.*shown/)
      assert.strictEqual(b.seen, "flagged", b.evidence)
      assert.strictEqual(b.reason?.tag, "NotSeen")
      assert.match(b.evidence ?? "", /bill\/list .*not shown/)
      for (const x of [e, c, b]) assert.strictEqual(x.state, "confirmed")
      // The read model shows the flag too.
      yield* (yield* ReadModels.ReadModels).catchUp()
      const row = Option.getOrThrow(yield* (yield* ReadModels.ReadModels).command(tenant, b.id))
      assert.strictEqual(row.reason?.tag, "NotSeen")
    }).pipe(Effect.provide(Layer.mergeAll(base, rmLayer)))
  }, 30_000)
})
