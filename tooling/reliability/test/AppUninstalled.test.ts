/**
 * When a business removes the application, the service sends `appUninstalled`, stops the
 * deliveries and the token stops working. The tenant goes on hold with the reason (no pull is
 * made for it any more), the reason is in the recent errors, and granting access again (a new
 * token through the admin API) makes it active.
 */
import { assert, describe, it } from "vitest"
import { admin, eventually, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

let t: Tenant
const suite = reliabilitySuite({
  setup: async (s) => {
    t = await s.tenant({ products: 3, orders: 0 })
  }
})

describe("appUninstalled", () => {
  it("puts the tenant on hold with the reason; a new grant makes it active again", async () => {
    const server = suite.server("ocs-rel-uninstalled-", { tenants: [t] })
    await server.start()
    const url = server.url
    const path = `/admin/tenants/${t.appId}/${t.businessId}`
    await eventually("the tenant active", async () => ((await admin(url, path)).body.status === "active" ? true : undefined), 20_000)

    // As documented: `{event, businessId}` and no data.
    const body = `{"event":"appUninstalled","businessId":${t.businessId},"webhooksVerifyToken":${JSON.stringify(t.verifyToken)}}`
    assert.strictEqual((await request(`${url}/webhooks/${t.appId}`, { body })).status, 200)
    const held = await eventually("the tenant on hold", async () => {
      const b = (await admin(url, path)).body
      return b.status === "attention" ? b : undefined
    }, 20_000)
    assert.strictEqual(held.attention.code, "APP_UNINSTALLED")
    const errors = (await admin(url, `/admin/errors?appId=${t.appId}`)).body.errors as Array<{ tag: string }>
    assert.isTrue(errors.some((e) => e.tag === "AppUninstalled"))

    // The business installs the application again and grants access: a new token.
    const token = await suite.control.createToken({ appId: t.appId, businessId: t.businessId })
    const regrant = await admin(url, "/admin/tenants", { method: "POST", body: { appId: t.appId, businessId: t.businessId, accessToken: token.accessToken } })
    assert.strictEqual(regrant.status, 201)
    assert.strictEqual((await admin(url, path)).body.status, "active")
    assert.strictEqual(await server.stop(), 0)
  })
})
