/**
 * Every v3 webhook shape from the simulator's sender into a real server (in this process, on
 * 127.0.0.1, SQLite files in a temporary folder), read back through the admin API: a
 * productDelete of several ids, a combo sold (the combo and its parts, each with its depots),
 * an orderPartialReturn, and an undocumented flat-depot inventoryChange that is kept and
 * flagged (a counter on /metrics, an unknown event in the tenant's counts), never applied.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import { ConfigFile } from "@ocs/config"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import * as Config from "../src/boot/Config.ts"
import * as Server from "../src/http/Server.ts"
import { eventually, tempDir } from "./processes.ts"
import { createTenant } from "./simulatorReads.ts"

const ADMIN_KEY = "shapes-admin-key-0123456789"

describe("v3 webhook shapes into a real server", () => {
  let sim: RunningSimulator
  let url: string
  let dataDir: string
  let scope: Scope.Closeable
  let t: Awaited<ReturnType<typeof createTenant>>
  const admin = async (path: string) => {
    const r = await fetch(`${url}${path}`, { headers: { "x-admin-key": ADMIN_KEY } })
    return { status: r.status, body: r.status === 200 ? await r.json() as any : undefined }
  }
  const tenantPath = () => `/admin/tenants/${t.appId}/${t.businessId}`

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, demo: false, webhooks: { retryDelaysMs: [50] } })
    t = await createTenant(sim.control, { products: 40, orders: 10, bills: 0, customers: 2 })
    dataDir = tempDir("ocs-shapes-")
    const config = await Effect.runPromise(Config.load({
      overrides: ConfigFile.merge({
        dataDir,
        server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
        api: { posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl },
        sync: { intervalSeconds: 3600, reconcileSeconds: 3600 },
        logLevel: "error"
      }, { tenants: [{ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] }] })
    }))
    scope = Effect.runSync(Scope.make())
    // The server's layer and the server itself live in `scope`, closed after the tests.
    const context = await Effect.runPromise(Layer.buildWithScope(Server.layer(config), scope))
    const running = await Effect.runPromise(Server.start(config).pipe(Effect.provide(context), Scope.provide(scope)))
    url = running.url
    const enabled = await sim.control.enableWebhooks(t.appId, { callbackUrl: `${url}/webhooks/${t.appId}`, verifyToken: t.verifyToken })
    assert.isTrue(enabled.enabled)
  }, 120_000)

  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await sim.close()
    Fs.rmSync(dataDir, { recursive: true, force: true })
  })

  /** The live products' ids, from the simulator's API (one page: the tenant has 40). */
  const products = async () => {
    const r = await fetch(`${sim.posBaseUrl}/v3.0/product/list?appId=${t.appId}&businessId=${t.businessId}`, {
      method: "POST",
      headers: { authorization: t.accessToken },
      body: `{"paginator":{"size":100}}`
    })
    return ((await r.json()) as any).data.map((p: any) => String(p.id)) as Array<string>
  }

  it("productDelete with a list of ids removes each product", async () => {
    const ids = (await products()).slice(0, 3)
    await eventually("the products in the read models", async () => (await admin(`${tenantPath()}/products/${ids[2]}`)).status === 200 || undefined)
    const sent = await sim.control.deleteProducts(t.businessId, ids)
    assert.strictEqual(sent.queued, 1)
    await eventually("three products deleted", async () => {
      const found = await Promise.all(ids.map((id) => admin(`${tenantPath()}/products/${id}`)))
      return found.every((r) => r.body?.deleted === true) || undefined
    }, 30_000)
  })

  it("a combo sold: one inventoryChange with the combo and its parts, each per depot", async () => {
    // The first full pass ends before the sale: a page it reads after the sale would hold the
    // new levels already, and the pull below (the same page, byte for byte) would be dropped as
    // a copy, with nothing new to wait for.
    const productReads = ((await admin(`${tenantPath()}/settings`)).body.resources as Array<string>).filter((r) => r.includes("/product/"))
    assert.isNotEmpty(productReads)
    await eventually("the first full pass of the product reads", async () => {
      const states = ((await admin("/admin/sync")).body?.sync ?? []) as Array<any>
      return productReads.every((resource) =>
        states.some((s) => s.appId === t.appId && s.businessId === t.businessId && s.resource === resource && s.fullCompletedAt !== null && s.cursor === null)
      ) || undefined
    }, 60_000)
    const [combo, a, b] = (await products()).slice(5, 8) as [string, string, string]
    const depot = (await sim.control.business(t.businessId)).depots.at(-1)!
    const sale = await sim.control.sellCombo(t.businessId, { comboId: combo, depotId: depot, quantity: 2, items: [{ productId: a, quantity: 1 }, { productId: b, quantity: 3 }] })
    const items = sale.products as ReadonlyArray<any>
    assert.deepStrictEqual(items.map((i) => String(i.id)), [combo, a, b])
    assert.deepStrictEqual(items[0].comboItems.map((c: any) => String(c.id)), [a, b])
    const stockRow = async (id: string) =>
      ((await admin(`${tenantPath()}/inventory?productId=${id}`)).body?.items ?? []).find((r: any) => String(r.depotId) === String(depot))
    const applied = new Map<string, number>()
    for (const item of items) {
      const sent = item.depots.find((d: any) => Number(d.id) === depot)
      const row = await eventually(`stock of ${item.id} in depot ${depot}`, async () => {
        const row = await stockRow(String(item.id))
        return row !== undefined && Number(row.remain) === Number(sent.remain) ? row : undefined
      }, 30_000)
      applied.set(String(item.id), Number(row.lastOffset))
    }
    // A pull after the webhook serves the same levels (the combo's too): the copy keeps them.
    const synced = await fetch(`${url}${tenantPath()}/sync?full=true`, { method: "POST", headers: { "x-admin-key": ADMIN_KEY } })
    assert.strictEqual(synced.status, 200)
    for (const item of items) {
      const sent = item.depots.find((d: any) => Number(d.id) === depot)
      const row = await eventually(`the pulled stock of ${item.id} in depot ${depot}`, async () => {
        const row = await stockRow(String(item.id))
        return row !== undefined && Number(row.lastOffset) > applied.get(String(item.id))! ? row : undefined
      }, 30_000)
      assert.strictEqual(Number(row.remain), Number(sent.remain), `stock of ${item.id} in depot ${depot} after the pull`)
    }
  })

  it("orderPartialReturn updates the order it names", async () => {
    const orders = await fetch(`${sim.posBaseUrl}/v3.0/order/list?appId=${t.appId}&businessId=${t.businessId}`, {
      method: "POST",
      headers: { authorization: t.accessToken },
      body: `{"paginator":{"size":100}}`
    }).then((r) => r.json() as any)
    const order = orders.data[0]
    const sent = await sim.control.partialReturn(t.businessId, order.info.id)
    assert.strictEqual(String((sent.order as any).originalOrder.id), String(order.info.id))
    await eventually("the order's partial return in the read models", async () => {
      const r = await admin(`${tenantPath()}/orders/${order.info.id}`)
      return JSON.stringify(r.body ?? {}).includes("partial return") || undefined
    }, 30_000)
  })

  it("a flat-depot inventoryChange is kept and flagged, never applied as the product's totals", async () => {
    const [p] = (await products()).slice(10, 11) as [string]
    await eventually("the product's stock from the full pass", async () =>
      ((await admin(`${tenantPath()}/inventory?productId=${p}`)).body?.items ?? []).length > 0 || undefined, 60_000)
    const before = (await admin(`${tenantPath()}/inventory?productId=${p}`)).body.items
    const unknownBefore = (await admin(tenantPath())).body.counts.unknownEvents
    // The shape a proxy was seen to send: {"products":[{"id":…,"depotId":2,…}]}.
    await sim.control.emitEvent(t.businessId, "inventoryChange", { products: [{ id: BigInt(p), depotId: 2, remain: 987654, available: 987654 }] })
    await eventually("the counter on /metrics", async () => {
      const text = await (await fetch(`${url}/metrics`)).text()
      return /^ocs_ingestion_undocumented_shape_total(\{[^}]*\})? 1$/m.test(text) || undefined
    }, 30_000)
    await eventually("an unknown event in the tenant's counts", async () =>
      (await admin(tenantPath())).body.counts.unknownEvents === unknownBefore + 1 || undefined, 30_000)
    const after = (await admin(`${tenantPath()}/inventory?productId=${p}`)).body.items
    assert.deepStrictEqual(after, before, "no row changed, and no depot '' row appeared")
    assert.isFalse(after.some((r: any) => r.depotId === ""))
    assert.isFalse(JSON.stringify(after).includes("987654"))
  })

  it("appUninstalled (no data) goes to the app removed and is answered 200", async () => {
    const sent = await sim.control.uninstall(t.businessId, t.appId)
    assert.strictEqual(sent.queued, 1)
    await sim.control.drainDeliveries(10_000)
    const deliveries = (await sim.control.deliveries({ appId: t.appId, event: "appUninstalled" })).deliveries
    assert.strictEqual(deliveries.length, 1)
    assert.strictEqual(deliveries[0]!.outcome, "ok")
    assert.notInclude(deliveries[0]!.body, `"data"`)
  })
})
