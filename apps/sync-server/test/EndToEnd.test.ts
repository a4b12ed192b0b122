import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { SimulatorControl } from "@ocs/simulator"
import { eventually, parseLoose, type Proc, startServerProcess, startSimulatorProcess } from "./processes.ts"

const TENANTS = 50
const ADMIN_KEY = "e2e-admin-key-0123456789"

let sim: { proc: Proc; url: string }
let server: { proc: Proc; url: string }
let control: SimulatorControl
// The order-forwarder plugin (loaded by package name) posts signed orders here.
const SECRET = "e2e-forwarder-secret"
const forwarded: Array<{ body: string; signature: string | undefined }> = []
let receiver: Http.Server
const tenants: Array<{ appId: string; businessId: string; accessToken: string; verifyToken: string }> = []

const admin = async (path: string, init: RequestInit = {}) => {
  const r = await fetch(`${server.url}${path}`, { ...init, headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json", ...init.headers } })
  return { status: r.status, body: parseLoose(await r.text()) }
}

/** Everything a list operation returns for a tenant, straight from the simulator. */
const listAll = async (t: (typeof tenants)[number], op: string) => {
  const out: Array<any> = []
  let next: string | undefined
  for (;;) {
    const text = `{"paginator":{"size":100${next === undefined ? "" : `,"next":${next}`}}}`
    const r = await fetch(`${sim.url}/pos/v3.0/${op}?appId=${t.appId}&businessId=${t.businessId}`, {
      method: "POST",
      headers: { authorization: t.accessToken, "content-type": "application/json" },
      body: text
    })
    const raw = await r.text()
    const page = parseLoose(raw)
    if (page.code !== 1) throw new Error(`${op}: ${raw}`)
    out.push(...page.data)
    const m = /"next"\s*:\s*(.*)\}\s*\}?\s*$/s.exec(raw)
    if (page.paginator?.next == null || m === null) return out
    // The cursor goes back exactly as received.
    next = raw.slice(raw.indexOf('"next"') + 6).replace(/^\s*:\s*/, "").replace(/\}\s*\}\s*$/, "").trim()
  }
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
    const t = await control.createTenant({ products: 120 + i, orders: 15, payments: 5, bigIds: i % 5 === 0 })
    tenants.push({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken, verifyToken: t.app.verifyToken })
  }
  server = await startServerProcess({
    server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
    dataDir: "data",
    api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
    rateLimits: { overrides: { "/v3.0/product/list": { requests: 150, windowSeconds: 3 }, "/v3.0/order/list": { requests: 150, windowSeconds: 3 }, "/v3.0/payment/list": { requests: 150, windowSeconds: 3 } } },
    sync: { resources: ["product", "order", "payment"], intervalSeconds: 2, reconcileSeconds: 3600, overlapSeconds: 5 },
    webhooks: { silenceAlertSeconds: 3600 },
    plugins: [{ use: "@ocs/plugin-order-forwarder", config: { url: `http://127.0.0.1:${(receiver.address() as Net.AddressInfo).port}/orders`, secret: SECRET } }],
    tenants: tenants.map((t) => ({ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] }))
  }, { OCS_ENCRYPTION_KEY: "11".repeat(32) })
}, 120_000)

afterAll(async () => {
  const code = await server?.proc.stop("SIGTERM")
  await sim?.proc.stop("SIGTERM")
  receiver?.close()
  assert.strictEqual(code, 0, `server exit code after SIGTERM\n${server?.proc.output().slice(-3000)}`)
})

describe("sync server end to end (simulator and server as processes)", () => {
  it("full sync, webhooks and incremental sync: every tenant's read models equal the simulator's data", async () => {
    // 1. Full sync of all 50 tenants.
    await eventually("the full sync of every tenant", async () => {
      const { body } = await admin("/admin/sync")
      const done = body.sync.filter((s: any) => s.fullCompletedAt !== null).length
      return done === TENANTS * 3 ? done : undefined
    }, 90_000, 500)

    // 2. Webhooks: enable them for every app, then change data in the simulator.
    for (const t of tenants) {
      const r = await control.enableWebhooks(t.appId, { callbackUrl: `${server.url}/webhooks/${t.appId}`, verifyToken: t.verifyToken })
      assert.isTrue(r.enabled, `webhooksEnabled answered 200 for ${t.appId}`)
    }
    for (const [i, t] of tenants.entries()) {
      const products = await listAll(t, "product/list")
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
    const pulledId = String((pulledOnly as any).order.id)

    await eventually("the pulled-only order in the read model", async () => {
      const { status } = await admin(`/admin/tenants/${quiet.appId}/${quiet.businessId}/orders/${pulledId}`)
      return status === 200 ? true : undefined
    }, 30_000, 500)

    // 4. Every tenant's read models equal the simulator's data.
    await control.setRateLimits({ enabled: false })
    let compared = 0
    for (const t of tenants) {
      const expected = await listAll(t, "product/list")
      const expectedOrders = await listAll(t, "order/list")
      const expectedPayments = await listAll(t, "payment/list")
      await eventually(`read models of ${t.appId}:${t.businessId}`, async () => {
        const products = (await admin(`/admin/tenants/${t.appId}/${t.businessId}/products?limit=1000`)).body.items
        const orders = (await admin(`/admin/tenants/${t.appId}/${t.businessId}/orders?limit=1000`)).body.items
        const payments = (await admin(`/admin/tenants/${t.appId}/${t.businessId}/payments?limit=1000`)).body.items
        const mine = new Map(products.map((p: any) => [String(p.id), p]))
        if (mine.size !== expected.length || orders.length !== expectedOrders.length || payments.length !== expectedPayments.length) return undefined
        for (const e of expected) {
          const p: any = mine.get(String(e.id))
          if (p === undefined || p.name !== e.name || Number(p.price) !== Number(e.price)) return undefined
        }
        return true
      }, 20_000, 300)
      compared++
    }
    assert.strictEqual(compared, TENANTS)
    const stock = (await admin(`/admin/tenants/${tenants[3]!.appId}/${tenants[3]!.businessId}/inventory`)).body.items
    assert.isTrue(stock.some((s: any) => Number(s.quantity) === 10), "inventoryChange reached the read model")

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
