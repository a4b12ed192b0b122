/**
 * Quarantine: webhooks of a registered application for a business that is not registered are
 * stored (answered 200, nothing lost) but not projected: the read models hold nothing of that
 * business and `/admin/quarantine` lists its records. Registering the business through the
 * admin API projects them in the same process, and the quarantine is empty again.
 */
import { assert, describe, it } from "vitest"
import { admin, envelope, eventually, files, maxOffset, projectedOffset, readOnly, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

let t: Tenant
let stranger: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    t = await s.tenant({ products: 3, orders: 0 })
    // A second business of the same application, granted in the simulator but not registered
    // with the server yet.
    const business = await s.control.createBusiness({ products: 2, orders: 0 })
    const token = await s.control.createToken({ appId: t.appId, businessId: business.businessId })
    stranger = { appId: t.appId, businessId: business.businessId, accessToken: token.accessToken, verifyToken: t.verifyToken }
  }
})

const ID = 9_300_000
const product = (i: number) => envelope(stranger, "productUpdate", { id: ID + i, name: `early-${i}`, price: i, updatedAt: "2025-01-01T00:00:00Z" })

/** Rows of the stranger's products in the live read-models file (read only, beside the server). */
const strangerRows = (dataDir: string) =>
  readOnly(files(dataDir).readModels, (db) =>
    (db.prepare("SELECT count(*) AS n FROM products WHERE app_id = ? AND business_id = ?").get(stranger.appId, stranger.businessId) as { n: number }).n)

describe("quarantine of webhooks for businesses that are not registered", () => {
  it("stores them, keeps them out of the read models, lists them, and projects them once the business registers", async () => {
    const server = suite.server("ocs-rel-quarantine-", { tenants: [t] })
    const dataDir = server.dataDir
    await server.start()
    const url = server.url

    for (let i = 0; i < 3; i++) assert.strictEqual((await request(`${url}/webhooks/${t.appId}`, { body: product(i) })).status, 200)
    const stored = readOnly(files(dataDir).events, (db) =>
      (db.prepare("SELECT count(*) AS n FROM records WHERE business_id = ?").get(stranger.businessId) as { n: number }).n)
    assert.strictEqual(stored, 3)
    // The projection moves past them (it never stalls), without applying them.
    const last = maxOffset(dataDir)
    await eventually("the projection passed the stranger's records", async () => projectedOffset(dataDir) >= last ? true : undefined, 30_000)
    assert.strictEqual(strangerRows(dataDir), 0)
    assert.strictEqual((await admin(url, `/admin/tenants/${stranger.appId}/${stranger.businessId}/products`)).status, 404)

    const listed = await admin(url, `/admin/quarantine?appId=${t.appId}&limit=2`)
    assert.strictEqual(listed.status, 200)
    assert.deepStrictEqual(listed.body.tenants.map((q: any) => [q.appId, q.businessId, q.records]), [[stranger.appId, stranger.businessId, 3]])
    assert.strictEqual(listed.body.latest.length, 2)
    for (const r of listed.body.latest) assert.deepInclude(r, { businessId: stranger.businessId, type: "productUpdate" })
    assert.strictEqual((await admin(url, "/admin/quarantine?appId=1")).body.tenants.length, 0)
    // Bounded parameters, like every admin route.
    for (const bad of ["limit=0", "limit=1001", "limit=1.5", "limit=x", "appId=abc", `appId=${"9".repeat(41)}`]) {
      assert.strictEqual((await admin(url, `/admin/quarantine?${bad}`)).status, 400, bad)
    }
    assert.strictEqual((await request(`${url}/admin/quarantine`, { method: "GET" })).status, 401)

    // Registering the business releases its records in the same process.
    const registered = await admin(url, "/admin/tenants", {
      method: "POST",
      body: { appId: stranger.appId, businessId: stranger.businessId, accessToken: stranger.accessToken }
    })
    assert.strictEqual(registered.status, 201)
    assert.strictEqual(registered.body.released, 3)
    const products = await admin(url, `/admin/tenants/${stranger.appId}/${stranger.businessId}/products?limit=1000`)
    assert.strictEqual(products.status, 200)
    const names = new Map((products.body.items as Array<any>).map((p) => [String(p.id), p.name]))
    for (let i = 0; i < 3; i++) assert.strictEqual(names.get(String(ID + i)), `early-${i}`)
    assert.deepStrictEqual((await admin(url, "/admin/quarantine")).body, { tenants: [], latest: [] })

    // Its next webhook is projected as usual, and nothing is quarantined any more.
    assert.strictEqual((await request(`${url}/webhooks/${t.appId}`, {
      body: envelope(stranger, "productUpdate", { id: ID, name: "after registration", price: 1, updatedAt: "2025-01-02T00:00:00Z" })
    })).status, 200)
    await eventually("the next webhook projected", async () => {
      const p = await admin(url, `/admin/tenants/${stranger.appId}/${stranger.businessId}/products/${ID}`)
      return p.body?.name === "after registration" ? true : undefined
    }, 30_000)
    assert.deepStrictEqual((await admin(url, "/admin/quarantine")).body, { tenants: [], latest: [] })
  }, 120_000)
})
