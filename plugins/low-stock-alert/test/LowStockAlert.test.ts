import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "@ocs/plugin-sdk"
import { harness, runPlugin, webhook, webhookRecord } from "@ocs/plugin-sdk/testing"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import lowStock, { type Alert } from "../src/index.ts"

const stock = (productId: number, quantity: number, depotId = 1) => webhook("inventoryChange", [{ productId, depotId, quantity }])

describe("low-stock-alert", () => {
  it.effect("alerts only when stock crosses below the threshold (per product and depot)", () =>
    Effect.gen(function*() {
      const report = yield* runPlugin(lowStock, {
        config: { webhookUrl: "http://127.0.0.1:1/alerts", defaultThreshold: 5, thresholds: { "8": 2 } },
        events: [
          ...stock(7, 10), // above: nothing
          ...stock(7, 4), // crosses below: alert
          ...stock(7, 3), // still below: nothing
          ...stock(7, 4, 2), // another depot, first seen below: alert
          ...stock(7, 8), // back above: nothing, re-arms
          ...stock(7, 1), // crosses again: alert
          ...stock(8, 3), // own threshold 2: not below
          ...stock(8, 1) // alert
        ]
      })
      const alerts = report.httpRequests.map((r) => (JSON.parse(r.body!) as { alert: Alert }).alert)
      assert.deepStrictEqual(alerts.map((a) => [a.productId, a.depotId, a.quantity, a.threshold]), [
        ["7", "1", 4, 5],
        ["7", "2", 4, 5],
        ["7", "1", 1, 5],
        ["8", "1", 1, 2]
      ])
      const stored = [...report.kv().keys()].filter((k) => k.startsWith("alert:"))
      assert.strictEqual(stored.length, 4)
      assert.deepStrictEqual(report.kv().get("level:7:1"), { below: true, quantity: 1 })
    }))

  it.live("end to end: a real log and read models; the alert names the product and reaches the webhook", () =>
    Effect.gen(function*() {
      const received: Array<{ body: string; key: string | undefined }> = []
      const server = yield* Effect.acquireRelease(
        Effect.callback<NodeHttp.Server>((resume) => {
          const s = NodeHttp.createServer((req, res) => {
            const chunks: Array<Buffer> = []
            req.on("data", (c: Buffer) => chunks.push(c))
            req.on("end", () => {
              received.push({ body: Buffer.concat(chunks).toString("utf8"), key: req.headers["idempotency-key"] as string | undefined })
              res.end()
            })
          })
          s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
        }),
        (s) => Effect.sync(() => { s.closeAllConnections(); s.close() })
      )
      const url = `http://127.0.0.1:${(server.address() as NodeNet.AddressInfo).port}/alerts`
      const h = yield* harness({ plugins: [{ plugin: lowStock, config: { webhookUrl: url, defaultThreshold: 5 } }] })
      yield* h.append([webhookRecord("productAdd", { id: 7, name: "Trà xanh" })])
      yield* h.append([webhookRecord("inventoryChange", { products: [{ productId: 7, quantity: 12 }] })])
      yield* h.append([webhookRecord("inventoryChange", { products: [{ productId: 7, quantity: 2 }] })])
      yield* h.append([webhookRecord("inventoryChange", { products: [{ productId: 7, quantity: 1 }] })])
      assert.strictEqual(received.length, 1)
      const alert = (JSON.parse(received[0]!.body) as { alert: Alert }).alert
      assert.strictEqual(alert.productName, "Trà xanh")
      assert.strictEqual(alert.quantity, 2)
      assert.strictEqual(received[0]!.key, alert.id)
      const kv = h.runtime.kv("low-stock-alert", { appId: "1001", businessId: "42" })
      assert.deepStrictEqual(Option.getOrUndefined(yield* kv.get(`alert:${alert.id}`)), alert)
      const [metrics] = yield* h.runtime.metrics
      assert.strictEqual(metrics!.handled, 3)
      assert.strictEqual(metrics!.lag, 0)
    }).pipe(Effect.scoped))
})
