/**
 * The write path's admin routes on a real server process (docs/architecture.md §4.31): a
 * command asked over HTTP, its effect seen in the copy (a pull), the id map that answers its
 * appProductId, cancel refused once sent, and the write path's series in /metrics; a command
 * outside a tenant's grant refused with a 403 naming the permission or depot.
 */
import { SimulatorControl } from "@ocs/simulator"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { adminClient, eventually, type Proc, startServerProcess, startSimulatorProcess, stopServerAndSimulator } from "./processes.ts"

const ADMIN_KEY = "command-routes-admin-key-0123456789"
let sim: { readonly proc: Proc; readonly url: string }
let server: { readonly proc: Proc; readonly url: string; readonly dir: string }
let base: string
let scopedBase: string
let admin: ReturnType<typeof adminClient>

beforeAll(async () => {
  sim = await startSimulatorProcess(["--products", "5"])
  const control = new SimulatorControl(sim.url)
  const t = await control.createTenant({ products: 5, orders: 0 })
  // A business that granted products and stock only, and depot 1 of its three.
  const scoped = await control.createTenant({ products: 1, orders: 0, permissions: ["product", "inventory"], depots: [1] })
  server = await startServerProcess({
    server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
    dataDir: "data",
    api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
    sync: { resources: ["product/list"], intervalSeconds: 1, reconcileSeconds: 3600, overlapSeconds: 5 },
    webhooks: { silenceAlertSeconds: 3600 },
    tenants: [
      { appId: t.app.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken }] },
      {
        appId: scoped.app.appId,
        verifyTokens: [scoped.app.verifyToken],
        businesses: [{ businessId: scoped.business.businessId, accessToken: scoped.token.accessToken, permissions: ["product", "inventory"], depots: ["1"] }]
      }
    ]
  }, { OCS_ENCRYPTION_KEY: "33".repeat(32) })
  base = `/admin/tenants/${t.app.appId}/${t.business.businessId}`
  scopedBase = `/admin/tenants/${scoped.app.appId}/${scoped.business.businessId}`
  admin = adminClient(() => server.url, ADMIN_KEY)
}, 120_000)

afterAll(() => stopServerAndSimulator(server, sim))

describe("command routes", () => {
  it("a product.add over HTTP: confirmed, seen in the copy, in the id map; cancel refused once sent; /metrics", async () => {
    const asked = await admin(`${base}/commands`, {
      method: "POST",
      headers: { "idempotency-key": "route-1" },
      body: JSON.stringify({ kind: "product.add", payload: { appProductId: "ROUTE-1", name: "Nón lá", price: 45_000 } })
    })
    assert.strictEqual(asked.status, 201, JSON.stringify(asked.body))
    const id = asked.body.id as string
    const seen = await eventually("the command confirmed and its effect seen in the copy", async () => {
      const c = (await admin(`${base}/commands/${id}`)).body
      return c.state === "confirmed" && c.seen === "copy" ? c : undefined
    }, 60_000, 250)
    assert.strictEqual(seen.confirmedBy, "answer")
    const map = await admin(`${base}/id-map/products?key=ROUTE-1,missing`)
    assert.strictEqual(map.status, 200)
    assert.deepStrictEqual(map.body.items.map((m: { key: string; id: string }) => [m.key, String(m.id)]), [["ROUTE-1", String(seen.entityId)]])
    const byId = await admin(`${base}/id-map/products?id=${seen.entityId}`)
    assert.deepStrictEqual(byId.body.items.map((m: { key: string }) => m.key), ["ROUTE-1"])
    assert.strictEqual((await admin(`${base}/id-map/customers`)).status, 404)
    const cancel = await admin(`${base}/commands/${id}/cancel`, { method: "POST" })
    assert.strictEqual(cancel.status, 409)
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    assert.match(metrics, /ocs_commands\{kind="product\.add",state="confirmed"\} 1\b/)
    assert.match(metrics, /ocs_commands_in_doubt 0\b/)
  }, 90_000)

  it("a command outside the grant: 403 naming the permission or the depot, nothing stored", async () => {
    const order = await admin(`${scopedBase}/commands`, {
      method: "POST",
      headers: { "idempotency-key": "scoped-1" },
      body: JSON.stringify({ kind: "order.add", payload: { channel: { appOrderId: "S-1" }, shippingAddress: { name: "Lan", mobile: "0912345678" }, products: [{ id: 1, price: 1000, quantity: 1 }] } })
    })
    assert.strictEqual(order.status, 403, JSON.stringify(order.body))
    assert.strictEqual(order.body.permission, "order")
    const depot = await admin(`${scopedBase}/commands`, {
      method: "POST",
      headers: { "idempotency-key": "scoped-2" },
      body: JSON.stringify({ kind: "inventory.importOther", payload: { depotId: 2, products: [{ id: 1, quantity: 1 }] } })
    })
    assert.strictEqual(depot.status, 403, JSON.stringify(depot.body))
    assert.strictEqual(depot.body.depotId, "2")
    const listed = await admin(`${scopedBase}/commands`)
    assert.strictEqual(listed.body.total, 0)
  }, 30_000)
})
