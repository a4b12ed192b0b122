import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { DomainEvent, definePlugin } from "@ocs/plugin-sdk"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { EngineRecord, Json } from "@ocs/protocol"
import { append, files, runtimeLayer, webhookRecord } from "./helpers.ts"

// With `changeStream` (the sync server), a plugin sees one event per change whichever came
// first, the webhook or a pull (docs/architecture.md §4.14): change events of webhook records
// reach it through the `changes` record the read models append when the webhook changed the copy.

const orderOf = (id: number, status: number, updatedAt: number) => ({ info: { id, status, updatedAt, createdAt: 100 }, channel: { appOrderId: `A-${id}` } })

const orderPage = (orders: ReadonlyArray<unknown>): LogRecord.NewRecord => ({
  appId: "1001",
  businessId: "42",
  source: "sync",
  type: "pos:/v3.0/order/list",
  meta: EngineRecord.entityMeta({ kind: "order", idField: "info.id", updatedAtField: "info.updatedAt" }) as unknown as LogRecord.Meta,
  body: Json.stringify({ code: 1, data: orders, paginator: { next: null } })
})

describe("PluginRuntime: the change stream", () => {
  it.live("a webhook that comes after a pull found its change is no second event; one that comes first is the event", () => {
    const f = files()
    const seen: Array<string> = []
    const counter = definePlugin({
      name: "counter",
      version: "1.0.0",
      subscribes: ["OrderAdded", "OrderUpdated", "OrderStatusChanged"],
      handle: (event) => Effect.sync(() => void seen.push(`${event._tag}:${event.source}`))
    })
    return Effect.gen(function*() {
      const rt = yield* PluginRuntime.PluginRuntime
      const rm = yield* ReadModels.ReadModels
      const log = yield* EventLog.EventLog
      // Projects, relays what changed, and waits for the plugin to reach the log's head.
      const settle = Effect.gen(function*() {
        yield* rm.catchUp()
        yield* rm.catchUp()
        const all = yield* Stream.runCollect(log.read({ tenant: "all" }))
        yield* rt.awaitOffset(all[all.length - 1]!.offset)
      })
      // The webhook first: it is the event, told by the webhook.
      yield* append([webhookRecord("orderAdd", orderOf(7, 54, 200))])
      yield* settle
      assert.deepStrictEqual(seen, ["OrderAdded:webhook"])
      // A pull of the same state: nothing.
      yield* append([orderPage([orderOf(7, 54, 200)])])
      yield* settle
      assert.deepStrictEqual(seen, ["OrderAdded:webhook"])
      // A pull finds a change whose webhook is late; the webhook then tells the same state.
      yield* append([orderPage([orderOf(7, 59, 300)])])
      yield* settle
      assert.deepStrictEqual(seen, ["OrderAdded:webhook", "OrderUpdated:sync", "OrderStatusChanged:sync"])
      yield* append([webhookRecord("orderUpdate", orderOf(7, 59, 300))])
      yield* settle
      assert.deepStrictEqual(seen, ["OrderAdded:webhook", "OrderUpdated:sync", "OrderStatusChanged:sync"], "the late webhook is no second event")
      // Without the change stream, the same log gives a plugin the webhooks' events a second time.
      const raw = (yield* Stream.runCollect(log.read({ tenant: "all" }))).flatMap((r) => DomainEvent.decode(r))
      assert.strictEqual(raw.filter((e) => e._tag === "OrderAdded" || e._tag === "OrderUpdated").length, 4)
    }).pipe(Effect.provide(runtimeLayer(f, { plugins: [{ plugin: counter }], changeStream: true })))
  })
})
