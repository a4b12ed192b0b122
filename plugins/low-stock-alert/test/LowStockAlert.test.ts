import { assert, describe, it } from "@effect/vitest"
import { DomainEvent, Effect, EngineRecord, Json, Option } from "@ocs/plugin-sdk"
import { harness } from "@ocs/plugin-runtime/testing"
import { runPlugin, webhook, webhookRecord } from "@ocs/plugin-sdk/testing"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import lowStock, { type Alert } from "../src/index.ts"

/** A v3 inventoryChange: one product, one depot; `available` is what orders have not held. */
const stock = (productId: number, remain: number, depotId = 1, available = remain) =>
  webhook("inventoryChange", [{ id: productId, remain, available, depots: [{ id: depotId, remain, available, holding: remain - available }] }])

/** A product/inventory sync page, as the sync server appends it. */
const pulled = (items: ReadonlyArray<unknown>) =>
  DomainEvent.decode({
    id: "pull-1", appId: "1001", businessId: "42", source: "sync", type: "product/inventory.page", receivedAt: 1,
    meta: EngineRecord.entityMeta({ kind: "inventory", idField: "productId" }),
    body: Json.stringify({ code: 1, data: items, paginator: { next: null } })
  })

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

  it.effect("\"available\" watches what can be sold; a pull alerts too; a level without depots is the product's total", () =>
    Effect.gen(function*() {
      const report = yield* runPlugin(lowStock, {
        config: { webhookUrl: "http://127.0.0.1:1/alerts", defaultThreshold: 5, field: "available" },
        events: [
          ...stock(7, 10, 1, 8), // available 8: nothing
          ...stock(7, 10, 1, 2), // on hand 10 but only 2 sellable: alert
          ...pulled([{ productId: 9, depots: [{ id: 3, remain: 9, available: 4 }, { id: 4, remain: 9, available: 9 }] }]), // depot 3: alert
          ...webhook("inventoryChange", [{ id: 11, remain: 1, available: 1 }]) // totals (no depots): alert
        ]
      })
      const alerts = report.httpRequests.map((r) => (JSON.parse(r.body!) as { alert: Alert }).alert)
      assert.deepStrictEqual(alerts.map((a) => [a.productId, a.depotId, a.quantity]), [["7", "1", 2], ["9", "3", 4], ["11", "", 1]])
      // The default field is stock on hand (`remain`), under its old name "quantity" or the API's.
      for (const field of [undefined, "quantity", "remain"]) {
        const onHand = yield* runPlugin(lowStock, {
          config: { webhookUrl: "http://127.0.0.1:1/alerts", defaultThreshold: 5, ...(field === undefined ? {} : { field }) },
          events: stock(7, 10, 1, 2)
        })
        assert.strictEqual(onHand.httpRequests.length, 0)
      }
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
      const change = (remain: number) => webhookRecord("inventoryChange", [{ id: 7, remain, depots: [{ id: 1, remain, available: remain }] }])
      yield* h.append([change(12)])
      yield* h.append([change(2)])
      yield* h.append([change(1)])
      assert.strictEqual(received.length, 1)
      const alert = (JSON.parse(received[0]!.body) as { alert: Alert }).alert
      assert.strictEqual(alert.productName, "Trà xanh")
      assert.strictEqual(alert.quantity, 2)
      assert.strictEqual(alert.depotId, "1")
      assert.strictEqual(received[0]!.key, alert.id)
      const kv = h.runtime.kv("low-stock-alert", { appId: "1001", businessId: "42" })
      assert.deepStrictEqual(Option.getOrUndefined(yield* kv.get(`alert:${alert.id}`)), alert)
      const [metrics] = yield* h.runtime.metrics
      assert.strictEqual(metrics!.handled, 3)
      assert.strictEqual(metrics!.lag, 0)
    }).pipe(Effect.scoped))
})
