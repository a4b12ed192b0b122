/**
 * How to test a plugin: build events as the service sends them (`webhook`), run the plugin with
 * in-memory capabilities (`runPlugin`), and assert on what it did. Nothing leaves the process:
 * HTTP requests, API calls and KV writes are captured. For an end-to-end test over a real
 * SQLite event log, read models and the runtime, see `harness` from `@ocs/plugin-runtime/testing` (plugins/low-stock-alert/test).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "@ocs/plugin-sdk"
import { runPlugin, webhook } from "@ocs/plugin-sdk/testing"
import template from "../src/index.ts"

/** A v3 orderAdd: the order nested as the service sends it. */
const order = (id: number, mobile: string) =>
  webhook("orderAdd", { info: { id, status: 54 }, shippingAddress: { name: "Lan", mobile }, products: [{ productId: 1, quantity: 1, price: 10 }] })

describe("plugin-template", () => {
  it.effect("notifies once when a customer reaches the milestone", () =>
    Effect.gen(function*() {
      const events = [...order(1, "0901"), ...order(2, "0901"), ...order(3, "0902"), ...order(4, "0901")]
      const report = yield* runPlugin(template, { config: { milestone: 2, notifyUrl: "https://example.test/hook" }, events })
      // One request, captured (not sent), for the second order of 0901.
      assert.strictEqual(report.httpRequests.length, 1)
      assert.deepStrictEqual(JSON.parse(report.httpRequests[0]!.body!), { customerMobile: "0901", orders: 2, eventId: events[1]!.id })
      // The final KV state, and each event's own effects.
      assert.strictEqual(report.kv().get("orders:0901"), 3)
      assert.deepStrictEqual(report.events.map((e) => e.outcome), ["handled", "handled", "handled", "handled"])
    }))

  it.effect("a redelivered event changes nothing (idempotent on the event id)", () =>
    Effect.gen(function*() {
      const [first] = order(1, "0901")
      const report = yield* runPlugin(template, { config: { milestone: 5 }, events: [first!, first!] })
      assert.strictEqual(report.kv().get("orders:0901"), 1)
      assert.deepStrictEqual(report.events[1]!.effects.filter((e) => e._tag === "KvSet"), [])
    }))

  it.effect("a bad config is refused with a clear error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(runPlugin(template, { config: { milestone: 0 }, events: [] }))
      assert.strictEqual(error._tag, "InvalidPluginConfig")
    }))
})
