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
let control: SimulatorControl
let businessId: string

beforeAll(async () => {
  sim = await startSimulatorProcess(["--products", "5"])
  control = new SimulatorControl(sim.url)
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
  businessId = String(t.business.businessId)
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

  it("the list counts by state and filters by flag; a command's ledger shows each attempt, the exact answers and the doubt's evidence", async () => {
    // customer/add applies but its answer is lost, and customer/list cannot be read back: in doubt.
    const faults = await Promise.all([
      control.addFault({ kind: "lostAnswer", operation: "customer/add", businessId, count: 1 }),
      control.addFault({ kind: "malformed", variant: "nonJson", operation: "customer/list", businessId })
    ])
    const ask = (key: string, kind: string, payload: unknown) =>
      admin(`${base}/commands`, { method: "POST", headers: { "idempotency-key": key }, body: JSON.stringify({ kind, payload }) })
    const lost = await ask("ledger-lost", "customer.add", { name: "Lan", mobile: "0987111222" })
    assert.strictEqual(lost.status, 201, JSON.stringify(lost.body))
    const doubt = await eventually("the customer.add in doubt", async () => {
      const c = (await admin(`${base}/commands/${lost.body.id}`)).body
      // First in doubt for the lost answer, then for the read-back that could not answer (with its evidence).
      return c.state === "inDoubt" && c.reason?.tag === "ReadBackFailed" ? c : undefined
    }, 60_000, 200)
    await control.removeFault(faults[1].id)
    const ok = await ask("ledger-ok", "product.add", { appProductId: "LEDGER-1", name: "Áo dài", price: 350_000 })
    const done = await eventually("the product.add confirmed", async () => {
      const c = (await admin(`${base}/commands/${ok.body.id}`)).body
      return c.state === "confirmed" ? c : undefined
    }, 60_000, 200)

    const all = await admin(`${base}/commands`)
    const states = all.body.items.map((c: { state: string }) => c.state)
    assert.deepStrictEqual(all.body.counts.byState, {
      pending: 0, sending: 0, cancelled: 0, failed: 0,
      inDoubt: states.filter((s: string) => s === "inDoubt").length,
      confirmed: states.filter((s: string) => s === "confirmed").length
    })
    assert.strictEqual(all.body.counts.byState.inDoubt, 1)
    assert.strictEqual(all.body.counts.flagged, 0)
    // Filters narrow the items, never the counts (they are the tenant's figures).
    const inDoubt = await admin(`${base}/commands?state=inDoubt&kind=customer.add`)
    assert.deepStrictEqual(inDoubt.body.items.map((c: { id: string }) => c.id), [lost.body.id])
    assert.deepStrictEqual(inDoubt.body.counts, all.body.counts)
    assert.strictEqual((await admin(`${base}/commands?flagged=true`)).body.total, 0)
    assert.strictEqual((await admin(`${base}/commands?flagged=false`)).body.total, all.body.total)
    assert.strictEqual((await admin(`${base}/commands?flagged=yes`)).status, 400)

    const ledger = (await admin(`${base}/commands/${done.id}/ledger`)).body
    assert.strictEqual(ledger.command.id, done.id)
    assert.deepStrictEqual(ledger.request, { operation: "/v3.0/product/add", body: [{ appProductId: "LEDGER-1", name: "Áo dài", price: 350_000 }] })
    assert.deepStrictEqual(ledger.transitions.slice(0, 4).map((t: { state: string }) => t.state), ["requested", "sent", "answered", "confirmed"])
    const answered = ledger.transitions.find((t: { state: string }) => t.state === "answered")
    assert.strictEqual(answered.body, done.lastAnswer, "the exact body of the answer")
    assert.strictEqual(answered.attempt, 1)
    assert.isTrue(ledger.transitions.every((t: { offset: number; at: number }, i: number, a: Array<{ offset: number }>) => t.at > 0 && (i === 0 || t.offset > a[i - 1]!.offset)))
    const doubted = (await admin(`${base}/commands/${doubt.id}/ledger`)).body
    assert.deepStrictEqual(doubted.transitions.map((t: { state: string }) => t.state), ["requested", "sent", "inDoubt", "inDoubt"])
    const reason = doubted.transitions.at(-1)
    assert.strictEqual(reason.evidence, doubt.evidence)
    assert.match(reason.evidence, /customer\/list/)
    assert.strictEqual((await admin(`${base}/commands/nope/ledger`)).status, 404)
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
