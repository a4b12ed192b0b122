/**
 * Redelivery and reordering: the simulator's own webhook sender delivers to the real server
 * with its faults on (webhookDuplicate, webhookReorder), through a loopback proxy that loses
 * the server's answer for every fourth delivery (answers 503 after the server stored it), so
 * the sender retries. Properties: each event is in the log once (every repeat left a dedupe
 * decision), and the read models equal the simulator's data for everything touched.
 */
import { afterAll, assert, describe, it } from "vitest"
import * as Http from "node:http"
import type * as Net from "node:net"
import { admin, eventually, files, readOnly, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    t = await s.tenant({ products: 40, orders: 4 })
  }
})

// Registered after the suite, so it runs first: the proxy closes before the server is killed.
let proxy: Http.Server | undefined
afterAll(() => {
  proxy?.close()
})

describe("redelivery and reordering from the simulator's sender", () => {
  it("applies each event once and ends in the simulator's state", async () => {
    const server = suite.server("ocs-rel-redeliver-", { tenants: [t], resources: ["product", "order"] })
    const dataDir = server.dataDir
    await server.start()
    const url = server.url
    await eventually("the first full sync", async () => {
      const { body } = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}`)
      return (body.sync as Array<any>).length === 2 && body.sync.every((s: any) => s.fullCompletedAt !== null) ? true : undefined
    }, 60_000)

    // The proxy: forwards everything; for every 4th new body, loses the server's 200 (answers 503).
    const forwarded = { requests: 0, ok: 0, lostAnswers: 0 }
    const bodies = new Set<string>()
    proxy = Http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", async () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const first = !bodies.has(body)
        bodies.add(body)
        forwarded.requests++
        const a = await request(`${url}${req.url}`, { body, headers: { "content-type": "application/json" } })
        if (a.status === 200) forwarded.ok++
        if (a.status === 200 && first && bodies.size % 4 === 0) {
          forwarded.lostAnswers++
          res.writeHead(503).end("lost answer")
        } else {
          res.writeHead(a.status === 0 ? 502 : a.status, { "content-type": "application/json" }).end(a.text)
        }
      })
    })
    await new Promise<void>((r) => proxy!.listen(0, "127.0.0.1", r))
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as Net.AddressInfo).port}/webhooks/${t.appId}`

    await suite.control.setWebhookOptions({ retryDelaysMs: [50, 100, 200], reorderHoldMs: 300, degradation: { ladder: [] } })
    assert.isTrue((await suite.control.enableWebhooks(t.appId, { callbackUrl: proxyUrl, verifyToken: t.verifyToken })).enabled)
    await suite.control.addFault({ kind: "webhookDuplicate", appId: t.appId, probability: 0.4, copies: 2 })
    await suite.control.addFault({ kind: "webhookReorder", appId: t.appId, probability: 0.3 })

    // Changes in the simulator; every one is pushed as a webhook.
    const products = (await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/products?limit=1000`)).body.items as Array<any>
    const touched = products.slice(0, 10).map((p) => String(p.id))
    const stock = new Map<string, number>()
    for (let k = 0; k < 40; k++) {
      const id = touched[k % touched.length]!
      await suite.control.updateProduct(t.businessId, id, { price: 100 + k, name: `redelivered ${k}` })
      if (k % 5 === 0) {
        await suite.control.changeInventory(t.businessId, [{ productId: id, depotId: 1, quantity: k }])
        stock.set(id, k)
      }
    }
    const deleted = String(products[11].id)
    await suite.control.deleteProduct(t.businessId, deleted)
    const orders = new Map<string, any>()
    for (let k = 0; k < 5; k++) {
      const o = (await suite.control.addOrder(t.businessId, { customerName: `Redelivery ${k}`, customerMobile: "0911", products: [{ productId: touched[k]!, quantity: 1 }] })).order as any
      orders.set(String(o.info.id), o)
    }
    for (const [i, id] of [...orders.keys()].entries()) {
      orders.set(id, (await suite.control.updateOrder(t.businessId, id, { status: 59 })).order)
      if (i % 2 === 0) orders.set(id, (await suite.control.updateOrder(t.businessId, id, { status: 60, customerName: `Done ${i}` })).order)
    }
    assert.isTrue((await suite.control.drainDeliveries(60_000)).idle, "every delivery finished")

    const deliveries = (await suite.control.deliveries({ appId: t.appId, limit: 100_000 })).deliveries
    const attempts = deliveries.filter((d) => d.attempt > 0 && (d.outcome === "ok" || d.outcome === "status"))
    const distinct = new Set(attempts.map((d) => d.body)).size
    const repeats = attempts.length - distinct
    const retried = deliveries.filter((d) => d.attempt > 1).length

    // The log: one row per distinct body; every repeat that reached the server was a dedupe decision.
    const log = readOnly(files(dataDir).events, (db) => ({
      rows: db.prepare("SELECT body, dedupe_key AS k FROM records WHERE source = 'webhook' AND app_id = ?").all(t.appId) as Array<{ body: string; k: string }>,
      decisions: (db.prepare("SELECT count(*) AS n FROM dedupe_decisions WHERE tenant LIKE ? AND source = 'webhook'").get(`${t.appId}:%`) as { n: number }).n
    }))
    const perKey = new Map<string, number>()
    for (const r of log.rows) perKey.set(r.k, (perKey.get(r.k) ?? 0) + 1)
    const doubled = [...perKey.values()].filter((n) => n > 1).length
    // Stored bodies keep every byte but the verify token's value.
    const stored = (b: string) => b.replace(`"webhooksVerifyToken":${JSON.stringify(t.verifyToken)}`, `"webhooksVerifyToken":"[redacted]"`)
    const missing = [...bodies].filter((b) => !log.rows.some((r) => r.body === stored(b))).length
    console.log(`[redelivery] deliveries=${attempts.length} distinct=${distinct} repeats=${repeats} (retries=${retried}, lost answers=${forwarded.lostAnswers}) forwarded=${forwarded.requests} acknowledged=${forwarded.ok}; log rows=${log.rows.length} duplicated=${doubled} lost=${missing} dedupe decisions=${log.decisions}`)
    assert.isAbove(repeats, 10, "the faults produced repeats")
    assert.isAbove(forwarded.lostAnswers, 3, "some answers were lost, so the sender retried")
    assert.strictEqual(doubled, 0, "no event stored twice")
    assert.strictEqual(missing, 0, "every delivered event is in the log")
    assert.strictEqual(log.rows.length, bodies.size)
    assert.strictEqual(log.decisions, forwarded.ok - bodies.size, "every repeat answered 200 left a dedupe decision")

    // Final state: products, stock, the deleted product and orders as the simulator has them.
    const mismatches: Array<string> = []
    await eventually("the read models to match the simulator", async () => {
      mismatches.length = 0
      for (const id of touched) {
        const expected = await suite.control.product(t.businessId, id) as any
        const got = (await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/products/${id}`)).body
        if (got.name !== expected.name || Number(got.price) !== Number(expected.prices.retail)) mismatches.push(`product ${id}: ${got.name}/${got.price} vs ${expected.name}/${expected.prices.retail}`)
      }
      for (const [id, q] of stock) {
        const levels = (await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/inventory?productId=${id}`)).body.items as Array<any>
        if (!levels.some((l) => String(l.depotId) === "1" && Number(l.remain) === q)) mismatches.push(`stock ${id}: ${JSON.stringify(levels)} vs ${q}`)
      }
      const gone = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/products/${deleted}`)
      if (!(gone.status === 404 || gone.body.deleted === true)) mismatches.push(`product ${deleted} not deleted`)
      for (const [id, o] of orders) {
        const got = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/orders/${id}`)
        if (got.status !== 200 || got.body.status !== String(o.info.status) || got.body.customerName !== o.shippingAddress.name) mismatches.push(`order ${id}: ${got.body.status}/${got.body.customerName} vs ${o.info.status}/${o.shippingAddress.name}`)
      }
      return mismatches.length === 0 ? true : undefined
    }, 20_000, 500).catch(() => undefined)
    console.log(`[redelivery] final state: products=${touched.length} stock=${stock.size} orders=${orders.size} deleted=1 mismatches=${mismatches.length}`)
    assert.deepStrictEqual(mismatches, [], "read models equal the simulator's data")
  })
})
