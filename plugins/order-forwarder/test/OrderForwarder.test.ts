import { assert, describe, it } from "@effect/vitest"
import { Effect } from "@ocs/plugin-sdk"
import { runPlugin, webhook } from "@ocs/plugin-sdk/testing"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import forwarder, { SIGNATURE_HEADER, TIMESTAMP_HEADER, verify } from "../src/index.ts"

const SECRET = "shared-secret-of-the-receiver"

interface Received {
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: string
  readonly verified: boolean
}

/** A receiver on 127.0.0.1 that verifies signatures with the shared secret; `statuses` in turn. */
const receiver = (statuses: ReadonlyArray<number>) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly received: Array<Received>; readonly server: NodeHttp.Server }>((resume) => {
      const received: Array<Received> = []
      const server = NodeHttp.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          const verified = verify(SECRET, body, req.headers[SIGNATURE_HEADER] as string | undefined)
          received.push({ headers: req.headers, body, verified })
          res.statusCode = verified ? statuses[Math.min(received.length - 1, statuses.length - 1)]! : 401
          res.end()
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as NodeNet.AddressInfo).port}/orders`, received, server })))
    }),
    ({ server }) => Effect.sync(() => { server.closeAllConnections(); server.close() })
  )

describe("order-forwarder", () => {
  it.live("POSTs a signed order the receiver verifies; retries a 500 until it succeeds, with one idempotency key", () =>
    Effect.gen(function*() {
      const server = yield* receiver([500, 500, 200])
      // A v3 order, nested; a large id must travel digit for digit.
      const events = webhook("orderAdd", {
        info: { id: 9007199254740993n, status: 54, depotId: 3, createdAt: 1714557600 },
        channel: { appOrderId: "A-1", saleChannel: 42 },
        shippingAddress: { name: "Lan", mobile: "0901" },
        products: [{ productId: 7, quantity: 2, price: 150000 }, { productId: 8, quantity: 1, price: 99000, discount: 9000 }]
      })
      const report = yield* runPlugin(forwarder, {
        config: { url: server.url, secret: SECRET },
        events,
        http: "live",
        retries: true
      })
      assert.strictEqual(report.events[0]!.outcome, "handled")
      assert.strictEqual(report.events[0]!.attempts, 3)
      assert.strictEqual(server.received.length, 3)
      assert.isTrue(server.received.every((r) => r.verified))
      const keys = new Set(server.received.map((r) => r.headers["idempotency-key"]))
      assert.deepStrictEqual([...keys], [events[0]!.id])
      const last = server.received[2]!
      assert.include(last.body, '"order":{"info":{"id":9007199254740993,')
      const body = JSON.parse(last.body) as { type: string; timestamp: number; orderId: string; appOrderId: string; summary: Record<string, unknown> }
      assert.strictEqual(body.type, "OrderAdded")
      assert.strictEqual(body.orderId, "9007199254740993")
      assert.strictEqual(body.appOrderId, "A-1")
      assert.deepStrictEqual(body.summary, {
        status: "54", saleChannel: "42", depotId: "3", customerName: "Lan", customerMobile: "0901", total: 390000, lineCount: 2
      })
      assert.strictEqual(String(body.timestamp), last.headers[TIMESTAMP_HEADER])
    }).pipe(Effect.scoped))

  it.live("a wrong secret is rejected by the receiver and the event fails (to be dead-lettered by the runtime)", () =>
    Effect.gen(function*() {
      const server = yield* receiver([200])
      const report = yield* runPlugin(forwarder, {
        config: { url: server.url, secret: "not-the-shared-secret" },
        events: webhook("orderUpdate", { info: { id: 5, status: 60 } }),
        http: "live"
      })
      assert.strictEqual(server.received.length, 1)
      assert.isFalse(server.received[0]!.verified)
      assert.strictEqual(report.events[0]!.outcome, "failed")
      assert.include(report.events[0]!.error, "401")
    }).pipe(Effect.scoped))

  it.effect("ignores other events and refuses a config without a secret", () =>
    Effect.gen(function*() {
      const report = yield* runPlugin(forwarder, { config: { url: "http://127.0.0.1:1/x", secret: SECRET }, events: webhook("productAdd", { id: 1 }) })
      assert.strictEqual(report.events.length, 0)
      const error = yield* Effect.flip(runPlugin(forwarder, { config: { url: "http://x" }, events: [] }))
      assert.strictEqual(error._tag, "InvalidPluginConfig")
    }))
})
