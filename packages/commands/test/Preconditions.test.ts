/**
 * `order.edit` preconditions from the copy (docs/api-catalogue.md §3.4): an order the read
 * models show handed to a carrier, or a status move the service forbids (a cancelled order made
 * confirmed), is refused before anything is stored or sent; an edit sends only what the copy
 * does not already show.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { EventLog } from "@ocs/event-log"
import { EngineRecord, EngineRecordCommands, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { CommerceClient } from "@ocs/transport"
import { Effect, Layer, Stream } from "effect"
import * as NodePath from "node:path"
import { CommandCopy, CommandEngine } from "../src/CommandEngine.ts"
import { engineLayer, tempLog, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let inTransit: string
let fresh: string
let cancelled: string
let named: string

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  const t = await sim.control.createTenant({ products: 5, orders: 0 })
  tenant = { appId: String(t.app.appId), businessId: String(t.business.businessId) }
  tokens.set(`${tenant.appId}:${tenant.businessId}`, t.token.accessToken)
  const idOf = (o: any) => String(o.info?.id ?? o.id)
  inTransit = idOf((await sim.control.addOrder(tenant.businessId, { status: 59 }, { silent: true })).order)
  fresh = idOf((await sim.control.addOrder(tenant.businessId, {}, { silent: true })).order)
  cancelled = idOf((await sim.control.addOrder(tenant.businessId, { status: 63 }, { silent: true })).order)
  named = idOf((await sim.control.addOrder(tenant.businessId, { customerName: "Lan" }, { silent: true })).order)
})

/** The copy: an order/list page of these orders, appended and projected as a sync would. */
const copyOf = (ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const client = yield* CommerceClient.CommerceClient
    const access = CommerceClient.tenantAccess(tenant.appId, tenant.businessId, tokens.get(`${tenant.appId}:${tenant.businessId}`)!)
    const pages = yield* Stream.runCollect(client.pages(access, Operation.orderList, { filters: { ids: ids.map(Number) } }))
    yield* (yield* EventLog.EventLog).append(pages.map((p) => ({
      ...tenant,
      source: "sync" as const,
      type: "order/list.page",
      body: p.text,
      meta: EngineRecord.entityMeta(Operation.orderList.entity!) as Record<string, unknown>
    })))
    yield* (yield* ReadModels.ReadModels).catchUp()
  })

const withCopy = () => {
  const log = tempLog()
  const rmLayer = ReadModels.ReadModels.layer({ filename: NodePath.join(NodePath.dirname(log), "read-models.db") })
  return Layer.mergeAll(engineLayer(sim, log, tokens, {}, CommandCopy.layerReadModels.pipe(Layer.provide(rmLayer))), rmLayer)
}
afterAll(() => sim.close())

describe("preconditions from the copy", () => {
  it.live("order.edit of an order in transit is refused without a call; a new order's edit is sent", () => {
    const log = tempLog()
    const rmLayer = ReadModels.ReadModels.layer({ filename: NodePath.join(NodePath.dirname(log), "read-models.db") })
    const base = engineLayer(sim, log, tokens, {}, CommandCopy.layerReadModels.pipe(Layer.provide(rmLayer)))
    return Effect.gen(function*() {
      // The copy: an order/list page of both orders, appended and projected as a sync would.
      const client = yield* CommerceClient.CommerceClient
      const access = CommerceClient.tenantAccess(tenant.appId, tenant.businessId, tokens.get(`${tenant.appId}:${tenant.businessId}`)!)
      const pages = yield* Stream.runCollect(client.pages(access, Operation.orderList, { filters: { ids: [Number(inTransit), Number(fresh)] } }))
      const eventLog = yield* EventLog.EventLog
      yield* eventLog.append(pages.map((p) => ({
        ...tenant,
        source: "sync" as const,
        type: "order/list.page",
        body: p.text,
        meta: EngineRecord.entityMeta(Operation.orderList.entity!) as Record<string, unknown>
      })))
      yield* (yield* ReadModels.ReadModels).catchUp()
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const engine = yield* CommandEngine
      const refused = yield* Effect.flip(engine.submit({ tenant, kind: "order.edit", payload: { info: { id: inTransit, description: "late" } }, requestedBy: { type: "admin" }, idempotencyKey: "e-1" }))
      assert.strictEqual(refused._tag, "PreconditionFailed")
      const calls = yield* Effect.promise(() => sim.control.calls({ since, operation: "order/edit", limit: 10 }))
      assert.strictEqual(calls.calls.length, 0, "no call for a refused edit")
      const stored = yield* Stream.runCollect(eventLog.read({ tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE] }))
      assert.strictEqual(stored.length, 0, "nothing stored")
      const sent = yield* engine.submit({ tenant, kind: "order.edit", payload: { info: { id: fresh, description: "on time" } }, requestedBy: { type: "admin" }, idempotencyKey: "e-2" })
      assert.strictEqual((yield* engine.outcome(tenant, sent.command.id)).state, "confirmed")
    }).pipe(Effect.provide(Layer.mergeAll(base, rmLayer)))
  }, 30_000)

  it.live("a status move the service forbids is refused without a call; an edit sends only what the copy does not show", () =>
    Effect.gen(function*() {
      yield* copyOf([cancelled, named])
      // The service changes the customer's name without the copy knowing (no webhook, no pull).
      yield* Effect.promise(() => sim.control.updateOrder(tenant.businessId, named, { customerName: "Mai" }, { silent: true }))
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const engine = yield* CommandEngine
      const refused = yield* Effect.flip(engine.submit({ tenant, kind: "order.edit", payload: { info: { id: cancelled, status: 56 } }, requestedBy: { type: "admin" }, idempotencyKey: "m-1" }))
      assert.strictEqual(refused._tag, "PreconditionFailed")
      assert.strictEqual((refused as { path: string }).path, "payload.info.status")
      assert.strictEqual((yield* Effect.promise(() => sim.control.calls({ since, operation: "order/edit", limit: 10 }))).calls.length, 0, "no call for a forbidden move")
      // The name the copy shows ("Lan") is not sent: the service keeps "Mai"; the description changes.
      const sent = yield* engine.submit({
        tenant,
        kind: "order.edit",
        payload: { info: { id: named, description: "gói quà" }, shippingAddress: { name: "Lan" } },
        requestedBy: { type: "admin" },
        idempotencyKey: "m-2"
      })
      assert.strictEqual((yield* engine.outcome(tenant, sent.command.id)).state, "confirmed")
      const client = yield* CommerceClient.CommerceClient
      const access = CommerceClient.tenantAccess(tenant.appId, tenant.businessId, tokens.get(`${tenant.appId}:${tenant.businessId}`)!)
      const [page] = yield* Stream.runCollect(client.pages(access, Operation.orderList, { filters: { ids: [Number(named)] } }))
      const order = page!.records[0] as { info: { description: string }; shippingAddress: { name: string } }
      assert.strictEqual(order.info.description, "gói quà")
      assert.strictEqual(order.shippingAddress.name, "Mai", "a field the copy already shows is not sent")
    }).pipe(Effect.provide(withCopy())), 30_000)
})
