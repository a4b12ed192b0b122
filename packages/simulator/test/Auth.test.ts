import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

describe("authentication and request checks", () => {
  let sim: RunningSimulator
  let demo: Caller
  beforeAll(async () => {
    sim = await start()
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  const errorCode = async (who: Caller, op = "product/list", body: unknown = {}, options = {}) =>
    (await call(sim, who, op, body, options)).json.errorCode

  it("accepts the demo tenant on both service families", async () => {
    const pos = await call(sim, demo, "product/list", {})
    const vpage = await call(sim, demo, "page/list", {}, { family: "vpage" })
    assert.strictEqual(pos.json.code, 1)
    assert.strictEqual(vpage.json.code, 1)
    assert.strictEqual(pos.status, 200)
  })

  it("rejects bad appId, businessId and token with the spec's codes (HTTP 200)", async () => {
    assert.strictEqual(await errorCode({ ...demo, appId: "999" }), "ERR_INVALID_APP_ID")
    assert.strictEqual(await errorCode({ ...demo, appId: "abc" }), "ERR_INVALID_APP_ID")
    assert.strictEqual(await errorCode({ ...demo, businessId: "777" }), "ERR_INVALID_BUSINESS_ID")
    assert.strictEqual(await errorCode({ ...demo, accessToken: "nope" }), "ERR_INVALID_ACCESS_TOKEN")
    const missing = await call(sim, demo, "product/list", {}, { query: `businessId=${demo.businessId}` })
    assert.strictEqual(missing.json.errorCode, "ERR_INVALID_APP_ID")
    assert.strictEqual(missing.status, 200)
    assert.strictEqual(missing.json.code, 0)
  })

  it("refuses a 2.0 token against /v3.0 with ERR_INVALID_VERSION", async () => {
    const token = await sim.control.createToken({ appId: demo.appId, businessId: demo.businessId, version: "2.0" })
    assert.strictEqual(await errorCode({ ...demo, accessToken: token.accessToken }), "ERR_INVALID_VERSION")
  })

  it("binds tokens to app and business, expiry and revocation", async () => {
    const other = await sim.control.createTenant({ products: 10 })
    // a valid token of another tenant
    assert.strictEqual(await errorCode({ ...demo, accessToken: other.token.accessToken }), "ERR_INVALID_ACCESS_TOKEN")
    const who = { appId: other.app.appId, businessId: other.business.businessId, accessToken: other.token.accessToken }
    assert.strictEqual((await call(sim, who, "product/list", {})).json.code, 1)
    await sim.control.expireToken(other.token.accessToken)
    assert.strictEqual(await errorCode(who), "ERR_INVALID_ACCESS_TOKEN")
    const fresh = await sim.control.createToken({ appId: who.appId, businessId: who.businessId })
    await sim.control.revokeGrant(who.businessId, who.appId)
    assert.strictEqual(await errorCode({ ...who, accessToken: fresh.accessToken }), "ERR_INVALID_ACCESS_TOKEN")
  })

  it("answers ERR_BUSINESS_NOT_ENABLE_API when the business disabled API use", async () => {
    const t = await sim.control.createTenant({ products: 5 })
    await sim.control.setApiEnabled(t.business.businessId, false)
    const who = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
    assert.strictEqual(await errorCode(who), "ERR_BUSINESS_NOT_ENABLE_API")
    await sim.control.setApiEnabled(t.business.businessId, true)
    assert.strictEqual((await call(sim, who, "product/list", {})).json.code, 1)
  })

  it("enforces permissions (ERR_403) and depots (ERR_INVALID_DEPOT_ID)", async () => {
    const t = await sim.control.createTenant({ products: 20, orders: 20, permissions: ["product"], depots: [1] })
    const who = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
    assert.strictEqual((await call(sim, who, "product/list", {})).json.code, 1)
    assert.strictEqual(await errorCode(who, "order/list"), "ERR_403")
    const full = await sim.control.createToken({
      appId: who.appId,
      businessId: who.businessId,
      permissions: ["product", "order", "inventory"],
      depots: [1]
    })
    const who2 = { ...who, accessToken: full.accessToken }
    assert.strictEqual(await errorCode(who2, "product/inventory", { filters: { depotIds: [2] } }), "ERR_INVALID_DEPOT_ID")
    assert.strictEqual(await errorCode(who2, "order/list", { filters: { depotIds: [3] } }), "ERR_INVALID_DEPOT_ID")
    assert.strictEqual(await errorCode(who2, "bill/list", { filters: { depotIds: [1, 2] } }), "ERR_403")
    const stock = await call(sim, who2, "product/inventory", { filters: { depotIds: [1] } })
    assert.strictEqual(stock.json.code, 1)
    assert.deepStrictEqual(stock.json.data[0].inventory.depots.map((d: { id: number }) => d.id), [1])
    // orders of depots not granted are not listed; stock totals cover granted depots only
    const orders = await call(sim, who2, "order/list", { filters: { ids: Array.from({ length: 20 }, (_, i) => 500001 + i) }, paginator: { size: 100 } })
    assert.isTrue(orders.json.data.length > 0)
    assert.isTrue(orders.json.data.every((o: { info: { depotId: number } }) => o.info.depotId === 1))
    const products = await call(sim, who2, "product/list", { paginator: { size: 1 } })
    const inventory = products.json.data[0].inventory
    assert.deepStrictEqual(inventory.depots.map((d: { id: number }) => d.id), [1])
    assert.strictEqual(inventory.remain, inventory.depots[0].remain)
    // business reads need no permission; the token's depots only
    const depots = await call(sim, who, "business/depot", {})
    assert.deepStrictEqual(depots.json.data.map((d: { id: number }) => d.id), [1])
  })

  it("answers ERR_INVALID_DATA for a body that is not JSON", async () => {
    const res = await call(sim, demo, "product/list", "{not json")
    assert.strictEqual(res.json.errorCode, "ERR_INVALID_DATA")
    assert.strictEqual(res.json.code, 0)
  })

  it("answers 404 for unknown operations and versions", async () => {
    assert.strictEqual((await call(sim, demo, "product/fly", {})).status, 404)
    assert.strictEqual((await call(sim, demo, "product/list", {}, { version: "2.0" })).status, 404)
    // the invented operations are gone; a POS read is not served on Vpage
    assert.strictEqual((await call(sim, demo, "payment/list", {})).status, 404)
    assert.strictEqual((await call(sim, demo, "inventory/list", {})).status, 404)
    assert.strictEqual((await call(sim, demo, "product/list", {}, { family: "vpage" })).status, 404)
  })
})
