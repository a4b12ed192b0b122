/**
 * Every admin parameter is bounded and every body capped: a value the server cannot honour
 * is answered 400 (or 413 for a body too large) with a message saying what was expected,
 * never 500, and nothing is changed by a refused request. Found by a review: `limit=1e20`
 * answered 500 with an internal message, admin bodies had no size limit, `appId: -1` was
 * accepted.
 */
import { assert, describe, it } from "vitest"
import { ADMIN_KEY, admin, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

let t: Tenant
const suite = reliabilitySuite({
  setup: async (s) => {
    t = await s.tenant({ products: 3, orders: 0 })
  }
})

describe("admin input", () => {
  it("answers 400 or 413 with a message, never 500, and changes nothing", async () => {
    const server = suite.server("ocs-rel-admin-", { tenants: [t] })
    await server.start()
    const url = server.url
    const tenantPath = `/admin/tenants/${t.appId}/${t.businessId}`
    const probes: ReadonlyArray<[string, string, unknown, number]> = [
      ["GET", "/admin/errors?limit=1e20", undefined, 400],
      ["GET", "/admin/errors?limit=-5", undefined, 400],
      ["GET", "/admin/errors?limit=0", undefined, 400],
      ["GET", "/admin/errors?appId=abc", undefined, 400],
      ["GET", "/admin/tenants?status=sleeping", undefined, 400],
      ["GET", `${tenantPath}/products?limit=1001`, undefined, 400],
      ["GET", `${tenantPath}/orders?status=new`, undefined, 400],
      ["GET", `/admin/tenants/-1/${t.businessId}`, undefined, 400],
      ["POST", "/admin/apps", { appId: -1, verifyTokens: ["x"] }, 400],
      ["POST", "/admin/apps", { appId: 0, verifyTokens: ["x"] }, 400],
      ["POST", "/admin/tenants", { appId: t.appId, businessId: "-7", accessToken: "tok" }, 400],
      ["POST", "/admin/apps", { appId: 5, verifyTokens: ["x"], pad: "x".repeat(128 * 1024) }, 413],
      ["POST", `${tenantPath}/sync?full=maybe`, undefined, 400]
    ]
    const wrong: Array<string> = []
    for (const [method, path, body, expected] of probes) {
      const r = await admin(url, path, { method, body })
      const message = typeof r.body === "object" && r.body !== null ? String(r.body.error ?? "") : ""
      if (r.status !== expected || message === "") wrong.push(`${method} ${path.slice(0, 60)} -> ${r.status} ${JSON.stringify(r.body).slice(0, 120)}`)
    }
    console.log(`[admin] probes=${probes.length} wrong=${wrong.length}`)
    assert.deepStrictEqual(wrong, [])
    // Nothing was created by the refused requests.
    const apps = (await admin(url, "/admin/apps")).body.apps as Array<{ appId: string }>
    assert.deepStrictEqual(apps.map((a) => a.appId).sort(), [t.appId])
    // Without the key, still 401 whatever the parameters.
    assert.strictEqual((await request(`${url}/admin/errors?limit=1e20`)).status, 401)
    assert.notStrictEqual(ADMIN_KEY, "")
    assert.strictEqual(await server.stop(), 0)
  })
})
