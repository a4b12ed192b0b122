/**
 * The in-memory helpers a plugin author tests with: no database, nothing leaves the process.
 */
import { assert, describe, it } from "@effect/vitest"
import { definePlugin, Effect, Option, PluginError, Schema } from "@ocs/plugin-sdk"
import { runPlugin, webhook } from "@ocs/plugin-sdk/testing"

const counter = definePlugin({
  name: "order-counter",
  version: "1.0.0",
  sdkVersion: "0.x",
  subscribes: ["OrderAdded"],
  config: Schema.Struct({ url: Schema.String }),
  handle: (event, ctx) =>
    Effect.gen(function*() {
      const seen = Option.getOrElse(yield* ctx.kv.get("seen"), () => 0) as number
      yield* ctx.kv.set("seen", seen + 1)
      yield* ctx.http.postJson(ctx.config.url, { id: event.id, tenant: ctx.tenant })
    })
})

describe("testing.runPlugin", () => {
  it.effect("captures HTTP and key-value writes per subscribed event, and skips the others", () =>
    Effect.gen(function*() {
      const report = yield* runPlugin(counter, {
        config: { url: "https://example.test/orders" },
        events: [...webhook("orderAdd", { info: { id: 1 } }), ...webhook("productAdd", { id: 2 }), ...webhook("orderAdd", { info: { id: 3 } })]
      })
      assert.strictEqual(report.events.length, 2)
      assert.deepStrictEqual(report.httpRequests.map((r) => r.url), ["https://example.test/orders", "https://example.test/orders"])
      assert.strictEqual(report.kv().get("seen"), 2)
    }))

  it.effect("decodes the config with the plugin's schema, as the runtime does", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(runPlugin(counter, { config: { url: 42 }, events: [] }))
      assert.instanceOf(error, PluginError.InvalidPluginConfig)
    }))
})
