/**
 * The admin reference cannot drift from the code: the routes the server's router holds and the
 * routes the reference documents are the same set (both ways), `docs/admin-api.md` is what the
 * reference writes, and the OpenAPI document is served. Then, through the real program, what
 * the reference promises of `POST /admin/tenants` (warnings) and `POST .../sync` (a reason
 * per resource).
 */
import { assert, describe, it } from "@effect/vitest"
import { afterAll, beforeAll } from "vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as Connect from "@ocs/tenant-store/Connect"
import { SimulatorControl } from "@ocs/simulator"
import * as Config from "../src/boot/Config.ts"
import * as Admin from "../src/http/Admin.ts"
import { AdminDocs, AdminRoutes } from "@ocs/admin-api"
import * as Sessions from "../src/http/console/Sessions.ts"
import * as Server from "../src/http/Server.ts"
import { adminClient, type Proc, startServerProcess, startSimulatorProcess, tempDir } from "./processes.ts"

const docsFile = fileURLToPath(new URL("../../../docs/admin-api.md", import.meta.url))

describe("the admin reference", () => {
  it.effect("documents exactly the routes the router holds", () =>
    Effect.gen(function*() {
      const dataDir = tempDir("ocs-admin-api-")
      const config = yield* Config.load({ overrides: { dataDir, server: { adminKey: "reference-admin-key-0123456789" } } })
      const router = yield* Admin.routes({
        adminKey: undefined,
        ready: () => true,
        silenceAlertMs: 3_600_000,
        sessions: Sessions.make({ secure: false }),
        connect: { posBaseUrl: "http://127.0.0.1:9/pos", grantPageUrl: "http://127.0.0.1:9/oauth", states: Connect.makeStates({ ttlMs: 1000, maxPending: 10 }) }
      }).pipe(Effect.provide(Server.layer(config)))
      assert.isAbove(router.table.length, 40)
      assert.deepStrictEqual(AdminDocs.drift(router.table), { undocumented: [], missing: [] })
      // The comparison sees a route added without its documentation, and a documented one gone.
      const drifted = AdminDocs.drift([...router.table.filter((r) => r.path !== "/admin/locks"), { method: "GET", path: "/admin/new" }])
      assert.deepStrictEqual(drifted, { undocumented: ["GET /admin/new"], missing: ["GET /admin/locks"] })
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }).pipe(Effect.scoped), 60_000)

  it("docs/admin-api.md is what the reference writes (./ocs --filter @ocs/sync-server docs:admin-api)", () => {
    assert.strictEqual(Fs.readFileSync(docsFile, "utf8"), AdminDocs.markdown())
  })

  it("the OpenAPI document has every route, its path parameters and its bodies' schemas", () => {
    const doc = AdminDocs.document()
    assert.strictEqual(doc.openapi, "3.1.0")
    const operations = Object.values(doc.paths).flatMap((item) => Object.keys(item))
    assert.strictEqual(operations.length, AdminRoutes.routes.length)
    const post = doc.paths["/admin/tenants"]!["post"] as any
    const schema = post.requestBody.content["application/json"].schema
    assert.deepStrictEqual([...schema.required].sort(), ["accessToken", "appId", "businessId"])
    assert.strictEqual(schema.properties.expiresAt.type, "string")
    const sync = doc.paths["/admin/tenants/{appId}/{businessId}/sync"]!["post"] as any
    assert.deepStrictEqual(sync.parameters.filter((p: any) => p.in === "path").map((p: any) => p.name), ["appId", "businessId"])
    assert.includeMembers(Object.keys(sync.responses), ["200", "400", "401", "404"])
  })
})

const ADMIN_KEY = "admin-api-test-key-0123456789"
let sim: { proc: Proc; url: string }
let server: { proc: Proc; url: string; dir: string }
let control: SimulatorControl

const admin = adminClient(() => server.url, ADMIN_KEY)

describe("the admin API as documented", () => {
  beforeAll(async () => {
    sim = await startSimulatorProcess(["--products", "20"])
    control = new SimulatorControl(sim.url)
    server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      // Nothing runs by itself: every pass below is asked for.
      sync: { resources: ["product/list", "customer/list"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5, gapFillSilenceSeconds: 3600 },
      webhooks: { silenceAlertSeconds: 3600 }
    }, { OCS_ENCRYPTION_KEY: "33".repeat(32) })
  }, 60_000)

  afterAll(async () => {
    await server?.proc.stop()
    await sim?.proc.stop()
    if (server !== undefined) Fs.rmSync(server.dir, { recursive: true, force: true })
  })

  it("serves the OpenAPI document to a caller with the key", async () => {
    const r = await fetch(`${server.url}/admin/openapi.json`, { headers: { "x-admin-key": ADMIN_KEY } })
    assert.strictEqual(r.status, 200)
    assert.deepStrictEqual(JSON.parse(await r.text()), JSON.parse(JSON.stringify(AdminDocs.document())))
    assert.strictEqual((await fetch(`${server.url}/admin/openapi.json`)).status, 401)
  })

  it("a tenant without expiresAt is registered with a warning; one with it, without", async () => {
    const t = await control.createTenant({ products: 5, customers: 2 })
    assert.strictEqual((await admin("/admin/apps", { method: "POST", body: JSON.stringify({ appId: t.app.appId, verifyTokens: [t.app.verifyToken] }) })).status, 201)
    const tenant = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
    // A misspelt field is refused, not dropped (it would have left the tenant without expiry).
    const misspelt = await admin("/admin/tenants", { method: "POST", body: JSON.stringify({ ...tenant, expiresat: "2027-01-01" }) })
    assert.strictEqual(misspelt.status, 400)
    assert.include(misspelt.body.error, "`expiresat`: unknown key; did you mean `expiresAt`?")
    const without = await admin("/admin/tenants", { method: "POST", body: JSON.stringify(tenant) })
    assert.strictEqual(without.status, 201)
    assert.strictEqual(without.body.warnings.length, 1)
    assert.include(without.body.warnings[0], "no expiresAt")
    const expiresAt = new Date(Date.now() + 200 * 24 * 3600 * 1000).toISOString()
    const withDate = await admin("/admin/tenants", { method: "POST", body: JSON.stringify({ ...tenant, expiresAt }) })
    assert.deepStrictEqual(withDate.body.warnings, [])
    assert.strictEqual(withDate.body.expiresInDays, 199)

    // POST .../sync: each resource by name; what ran has no reason, what did not says why.
    const path = `/admin/tenants/${t.app.appId}/${t.business.businessId}`
    const first = await admin(`${path}/sync`, { method: "POST" })
    assert.strictEqual(first.status, 200)
    assert.deepStrictEqual(first.body.reports.map((r: any) => [r.resource, r.mode, r.outcome, r.reason]), [
      ["pos:/v3.0/product/list", "full", "done", null],
      ["pos:/v3.0/customer/list", "full", "done", null]
    ])
    const again = await admin(`${path}/sync`, { method: "POST" })
    for (const r of again.body.reports) {
      assert.strictEqual(r.mode, "skipped")
      assert.include(r.reason, "not due")
    }
    assert.strictEqual((await admin(`${path}/pause`, { method: "POST" })).status, 200)
    const paused = await admin(`${path}/sync?full=true`, { method: "POST" })
    assert.deepStrictEqual(paused.body.reports.map((r: any) => [r.resource, r.mode, r.reason]), [
      ["pos:/v3.0/product/list", "skipped", "the tenant is paused (POST .../resume)"],
      ["pos:/v3.0/customer/list", "skipped", "the tenant is paused (POST .../resume)"]
    ])
  }, 60_000)
})

