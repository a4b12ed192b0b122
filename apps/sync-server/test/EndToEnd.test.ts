import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { Ids, Operation } from "@ocs/protocol"
import { SimulatorControl } from "@ocs/simulator"
import { adminClient, eventually, fullSyncsDone, type Proc, startServerProcess, startSimulatorProcess, stopServerAndSimulator } from "./processes.ts"
import { createTenant, listAll, serverAgainst } from "./simulatorReads.ts"

const TENANTS = 50
/** The reads the server syncs by default (docs/api-catalogue.md), each compared below. */
const READS = ["product/list", "order/list", "bill/list", "customer/list", "business/depot", "product/inventory", "product/category", "product/brand"]
const ADMIN_KEY = "e2e-admin-key-0123456789"

let sim: { proc: Proc; url: string }
let server: { proc: Proc; url: string }
let control: SimulatorControl
// The order-forwarder plugin (loaded by package name) posts signed orders here.
const SECRET = "e2e-forwarder-secret"
const forwarded: Array<{ body: string; signature: string | undefined }> = []
let receiver: Http.Server
const tenants: Array<{ appId: string; businessId: string; accessToken: string; verifyToken: string }> = []

const admin = adminClient(() => server.url, ADMIN_KEY)

const DAY_MS = 24 * 3600 * 1000
/** Every order (31-day createdAt windows) or bill (31-day date windows) over the simulator's history. */
const windowed = async (t: (typeof tenants)[number], op: "order/list" | "bill/list") => {
  const out = new Map<string, any>()
  for (let end = Date.now(); end > Date.now() - 150 * DAY_MS; end -= 31 * DAY_MS) {
    const filters = op === "order/list"
      ? { createdAtFrom: Math.floor((end - 31 * DAY_MS) / 1000) + 1, createdAtTo: Math.floor(end / 1000) }
      : { fromDate: Operation.formatBound(end - 30 * DAY_MS, "date"), toDate: Operation.formatBound(end, "date") }
    for (const r of await listAll(sim.url, t, op, filters)) out.set(String(r.info?.id ?? r.id), r)
  }
  return out
}

beforeAll(async () => {
  receiver = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      forwarded.push({ body: Buffer.concat(chunks).toString("utf8"), signature: req.headers["x-ocs-signature"] as string | undefined })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
  sim = await startSimulatorProcess(["--rate-window", "3", "--products", "50"])
  control = new SimulatorControl(sim.url)
  for (let i = 0; i < TENANTS; i++) {
    tenants.push(await createTenant(control, { products: 120 + i, orders: 15, bills: 10, customers: 8, bigIds: i % 5 === 0 }))
  }
  server = await startServerProcess({
    ...serverAgainst(sim.url, ADMIN_KEY, READS),
    sync: { intervalSeconds: 2, reconcileSeconds: 3600, overlapSeconds: 5, horizonDays: 200 },
    webhooks: { silenceAlertSeconds: 3600 },
    plugins: [{ use: "@ocs/plugin-order-forwarder", config: { url: `http://127.0.0.1:${(receiver.address() as Net.AddressInfo).port}/orders`, secret: SECRET } }],
    tenants: tenants.map((t) => ({ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] }))
  }, { OCS_ENCRYPTION_KEY: "11".repeat(32) })
}, 120_000)

afterAll(async () => {
  receiver?.close()
  await stopServerAndSimulator(server, sim)
})

describe("sync server end to end (simulator and server as processes)", () => {
  it("full sync, webhooks and incremental sync: every tenant's read models equal the simulator's data", async () => {
    // 1. Full sync of all 50 tenants.
    await fullSyncsDone(admin, TENANTS * READS.length, "the full sync of every tenant")

    // 2. Webhooks: enable them for every app, then change data in the simulator.
    for (const t of tenants) {
      const r = await control.enableWebhooks(t.appId, { callbackUrl: `${server.url}/webhooks/${t.appId}`, verifyToken: t.verifyToken })
      assert.isTrue(r.enabled, `webhooksEnabled answered 200 for ${t.appId}`)
    }
    for (const [i, t] of tenants.entries()) {
      const products = await listAll(sim.url, t, "product/list")
      const p = products[i % products.length]
      await control.updateProduct(t.businessId, p.id, { price: 1000 + i, name: `renamed ${i}` })
      await control.changeInventory(t.businessId, [{ productId: p.id, depotId: 1, quantity: 7 + i }])
      if (i % 3 === 0) await control.deleteProduct(t.businessId, products[(i + 1) % products.length].id)
      await control.addOrder(t.businessId, { customerName: `E2E ${i}`, customerMobile: "0900000000", products: [{ productId: p.id, quantity: 2 }] })
    }
    await control.drainDeliveries(30_000)

    // 3. Incremental sync alone: webhooks off for one app, then an order it only sees by pulling.
    const quiet = tenants[1]!
    await control.disableWebhooks(quiet.appId)
    const pulledOnly = await control.addOrder(quiet.businessId, { customerName: "pulled only", products: [] })
    const pulledId = String((pulledOnly as any).order.info.id)

    await eventually("the pulled-only order in the read model", async () => {
      const { status } = await admin(`/admin/tenants/${quiet.appId}/${quiet.businessId}/orders/${pulledId}`)
      return status === 200 ? true : undefined
    }, 30_000, 500)

    // 4. Every tenant's read models equal the simulator's data.
    await control.setRateLimits({ enabled: false })
    let compared = 0
    for (const [i, t] of tenants.entries()) {
      const tenant = `/admin/tenants/${t.appId}/${t.businessId}`
      const expected = await listAll(sim.url, t, "product/list")
      const expectedOrders = await windowed(t, "order/list")
      const expectedBills = await windowed(t, "bill/list")
      const expectedCustomers = await listAll(sim.url, t, "customer/list")
      const expectedDepots = await listAll(sim.url, t, "business/depot")
      const expectedCategories = await listAll(sim.url, t, "product/category")
      const expectedBrands = await listAll(sim.url, t, "product/brand")
      const expectedStock = await listAll(sim.url, t, "product/inventory")
      // Order lines are compared for every fifth tenant (one admin call per order).
      const withItems = i % 5 === 0
      let why = ""
      await eventually(`read models of ${Ids.tenantKey(t)}`, async () => {
        const products = (await admin(`${tenant}/products?limit=1000`)).body.items
        const mine = new Map(products.map((p: any) => [String(p.id), p]))
        if (mine.size !== expected.length) { why = "product count"; return undefined }
        for (const e of expected) {
          const p: any = mine.get(String(e.id))
          if (p === undefined || p.name !== e.name || Number(p.price) !== Number(e.prices.retail)) { why = "product fields"; return undefined }
        }
        const orders = new Map((await admin(`${tenant}/orders?limit=1000`)).body.items.map((o: any) => [String(o.id), o]))
        if (orders.size !== expectedOrders.size) { why = "order count"; return undefined }
        for (const [id, e] of expectedOrders) {
          const o: any = orders.get(id)
          if (o === undefined || o.status !== String(e.info.status) || o.customerName !== e.shippingAddress.name || o.lineCount !== e.products.length) { why = "order fields"; return undefined }
          if (withItems) {
            const detail = (await admin(`${tenant}/orders/${id}`)).body
            const lines = detail.items.map((l: any) => `${l.productId}x${Number(l.quantity)}`).join(",")
            if (lines !== e.products.map((l: any) => `${l.productId}x${l.quantity}`).join(",")) { why = `order ${id} lines`; return undefined }
          }
        }
        const bills = new Map((await admin(`${tenant}/bills?limit=1000`)).body.items.map((b: any) => [String(b.id), b]))
        if (bills.size !== expectedBills.size) { why = "bill count"; return undefined }
        for (const [id, e] of expectedBills) {
          const b: any = bills.get(id)
          if (b === undefined || b.date !== e.date || Number(b.amount) !== Number(e.payment.amount) || b.mode !== String(e.mode)) { why = `bill ${id}`; return undefined }
        }
        const customers = (await admin(`${tenant}/customers?limit=1000`)).body.items
        const sameIds = (rows: Array<any>, records: Array<any>) =>
          JSON.stringify(rows.map((r) => `${r.id}:${r.name ?? ""}`).sort()) === JSON.stringify(records.map((r) => `${r.id}:${r.name ?? ""}`).sort())
        if (!sameIds(customers, expectedCustomers)) { why = "customers"; return undefined }
        if (!sameIds((await admin(`${tenant}/depots`)).body.items, expectedDepots)) { why = "depots"; return undefined }
        if (!sameIds((await admin(`${tenant}/categories`)).body.items, expectedCategories)) { why = "categories"; return undefined }
        if (!sameIds((await admin(`${tenant}/brands`)).body.items, expectedBrands)) { why = "brands"; return undefined }
        // Stock per product and depot.
        const levels = new Map((await admin(`${tenant}/inventory`)).body.items.map((l: any) => [`${l.productId}@${l.depotId}`, Number(l.remain)]))
        for (const item of expectedStock) {
          for (const d of item.inventory.depots) if (levels.get(`${item.productId}@${d.id}`) !== d.remain) { why = `stock of ${item.productId} in depot ${d.id}`; return undefined }
        }
        return true
      }, 20_000, 300).catch((e) => { throw new Error(`${String(e)}: ${why}`) })
      compared++
    }
    assert.strictEqual(compared, TENANTS)
    const stock = (await admin(`/admin/tenants/${tenants[3]!.appId}/${tenants[3]!.businessId}/inventory`)).body.items
    assert.isTrue(stock.some((s: any) => String(s.depotId) === "1" && Number(s.remain) === 10), "inventoryChange reached the read model")

    // The plugin forwarded each order added by webhook, signed with the shared secret.
    await eventually("orders forwarded by the plugin", async () => (forwarded.filter((f) => f.body.includes("E2E ")).length >= TENANTS ? true : undefined), 30_000)
    for (const f of forwarded) {
      const expected = `sha256=${Crypto.createHmac("sha256", SECRET).update(f.body, "utf8").digest("hex")}`
      assert.strictEqual(f.signature, expected)
    }
    const plugins = (await admin("/admin/plugins")).body.plugins
    assert.strictEqual(plugins[0].name, "order-forwarder")

    // No call ever reached the simulator during a lock, and no ERR_429 was earned.
    const calls = await control.calls({ limit: 200_000 })
    assert.strictEqual(calls.calls.filter((c) => c.locked).length, 0)
    assert.strictEqual(calls.calls.filter((c) => c.outcome === "ERR_429").length, 0)
  }, 240_000)
})
