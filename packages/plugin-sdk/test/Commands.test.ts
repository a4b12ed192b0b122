/**
 * `ctx.commands` in the test harness: commands are captured, typed per kind, never sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Effect, Schema } from "@ocs/plugin-sdk"
import { runPlugin, webhook } from "@ocs/plugin-sdk/testing"

const mirror = definePlugin({
  name: "order-mirror",
  version: "1.0.0",
  sdkVersion: "0.x",
  subscribes: ["OrderAdded"],
  config: Schema.Struct({}),
  handle: (event, ctx) =>
    Effect.gen(function*() {
      const outcome = yield* ctx.commands.send("customer.add", { name: "Lan", mobile: "0912000001" }, { key: `customer-of-${event.id}` })
      assert.strictEqual(outcome.state, "pending")
      yield* ctx.commands.send("order.add", {
        channel: { appOrderId: `mirror-${event.id}` },
        shippingAddress: { name: "Lan", mobile: "0912000001" },
        products: [{ id: "5", price: 1000, quantity: 1 }]
      })
    })
})

describe("ctx.commands in tests", () => {
  it.effect("captures each command with its kind, key and payload instead of sending it", () =>
    Effect.gen(function*() {
      const report = yield* runPlugin(mirror, { config: {}, events: [...webhook("orderAdd", { info: { id: 1 } })] })
      const commands = report.events.flatMap((e) => e.effects).filter((e) => e._tag === "Command")
      assert.deepStrictEqual(commands.map((c) => c._tag === "Command" ? [c.kind, c.key] : []), [
        ["customer.add", `customer-of-${report.events[0]!.eventId}`],
        ["order.add", "order.add"]
      ])
    }))

  it.effect("a command to another business of the application is captured with its businessId", () =>
    Effect.gen(function*() {
      const stock = definePlugin({
        name: "stock-mirror",
        version: "1.0.0",
        sdkVersion: "0.x",
        subscribes: ["OrderAdded"],
        config: Schema.Struct({}),
        handle: (_event, ctx) => ctx.commands.send("inventory.exportOther", { depotId: 1, products: [{ id: "5", quantity: 1 }] }, { key: "mirror", businessId: "200777" }).pipe(Effect.asVoid)
      })
      const report = yield* runPlugin(stock, { config: {}, events: [...webhook("orderAdd", { info: { id: 2 } })] })
      const commands = report.events.flatMap((e) => e.effects).filter((e) => e._tag === "Command")
      assert.deepStrictEqual(commands.map((c) => c._tag === "Command" ? [c.kind, c.businessId] : []), [["inventory.exportOther", "200777"]])
    }))
})
