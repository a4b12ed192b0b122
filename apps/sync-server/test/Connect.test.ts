/**
 * Businesses connect themselves (docs/architecture.md §4.32): the real server (in this process,
 * SQLite files) and the simulator over HTTP on 127.0.0.1. A browser's walk is played with
 * fetch: the connect link, the grant page's form (some boxes unticked), the callback. Refused
 * callbacks (forged or replayed state, expired code, wrong secret key) answer a 4xx page
 * saying why and change nothing.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as Fs from "node:fs"
import { ConfigFile } from "@ocs/config"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import * as Config from "../src/boot/Config.ts"
import * as Server from "../src/http/Server.ts"
import { eventually, tempDir } from "./processes.ts"

const ADMIN_KEY = "connect-admin-key-0123456789"
let sim: RunningSimulator
let url = ""
let scope: Scope.Closeable
let dataDir = ""
let appId = ""
let businessId = ""

const admin = (path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json", ...init.headers } })
const tenant = async () => (await admin(`/admin/tenants/${appId}/${businessId}`)).json() as Promise<any>
const setApp = (fields: Record<string, unknown>) =>
  admin("/admin/apps", { method: "POST", body: JSON.stringify({ appId, verifyTokens: [sim.demo!.verifyToken], ...fields }) })

/** The form's fields as a browser posts them: hidden and text inputs, ticked boxes. */
const formFields = (html: string): Array<[string, string]> => {
  const fields: Array<[string, string]> = []
  for (const m of html.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(m[1]!)?.[1]
    if (name === undefined || (/type="checkbox"/.test(m[1]!) && !/\bchecked\b/.test(m[1]!))) continue
    fields.push([name, (/value="([^"]*)"/.exec(m[1]!)?.[1] ?? "").replace(/&amp;/g, "&")])
  }
  return fields
}

/** Connect link -> grant page -> form posted (after `edit`) -> the callback URL the browser is sent to. */
const walk = async (edit: (f: Array<[string, string]>) => Array<[string, string]> = (f) => f): Promise<string> => {
  const start = await fetch(`${url}/connect/${appId}`, { redirect: "manual" })
  assert.strictEqual(start.status, 302)
  const grantPage = start.headers.get("location")!
  assert.isTrue(grantPage.startsWith(`${sim.url}/oauth?`), grantPage)
  const form = formFields(await (await fetch(grantPage)).text())
  const posted = await fetch(`${sim.url}/oauth`, { method: "POST", redirect: "manual", body: new URLSearchParams(edit(form)) })
  assert.strictEqual(posted.status, 302)
  return posted.headers.get("location")!
}

beforeAll(async () => {
  // Codes live 3 s and an old token 2 s after a new one, so that the test can outlast both.
  sim = await startSimulator({ port: 0, products: 250, orders: 40, bills: 10, customers: 10, accessCodeLifetimeMs: 3000, tokenOverlapMs: 2000 })
  appId = sim.demo!.appId
  businessId = sim.demo!.businessId
  dataDir = tempDir("ocs-connect-")
  const config = await Effect.runPromise(Config.load({
    overrides: ConfigFile.merge({
      dataDir,
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      api: { posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl },
      sync: { intervalSeconds: 3600, reconcileSeconds: 3600 },
      logLevel: "error",
      tenants: [{ appId, verifyTokens: [sim.demo!.verifyToken], secretKey: sim.demo!.secretKey }],
      connect: { checkIntervalSeconds: 1 }
    }, {})
  }))
  scope = Effect.runSync(Scope.make())
  // The server's services live in this scope until afterAll closes it.
  const services = await Effect.runPromise(Layer.buildWithScope(Server.layer(config), scope))
  const running = await Effect.runPromise(Server.start(config).pipe(Effect.provide(services), Scope.provide(scope)))
  url = running.url
}, 60_000)
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await sim.close()
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

describe("businesses connect themselves", () => {
  it("without a public URL the connect link says connecting is not set up", async () => {
    const res = await fetch(`${url}/connect/${appId}`, { redirect: "manual" })
    assert.strictEqual(res.status, 409)
    assert.match(await res.text(), /public address/)
    assert.strictEqual((await fetch(`${url}/connect/777`, { redirect: "manual" })).status, 404)
    // The public URL through the admin API; the secret key given in the config stays (never shown).
    assert.strictEqual((await setApp({ publicUrl: url })).status, 201)
    const apps = await (await admin("/admin/apps")).json() as any
    assert.deepInclude(apps.apps, { appId, enabled: true, connect: true, publicUrl: url })
    assert.notInclude(JSON.stringify(apps), sim.demo!.secretKey)
  })

  it("a business grants some permissions and two of three depots: it is registered with exactly those and synced", async () => {
    const callback = await walk((f) => f.filter(([k, v]) => !(k === "permissions" && v === "customer") && !(k === "depotIds" && v === "3")))
    assert.isTrue(callback.startsWith(`${url}/connect/${appId}/callback?state=`), callback)
    const done = await fetch(callback)
    const text = await done.text()
    assert.strictEqual(done.status, 200, text)
    assert.match(text, /Your shop is connected/)
    const t = await tenant()
    assert.strictEqual(t.status, "active")
    assert.deepStrictEqual(t.depots, ["1", "2"])
    assert.notInclude(t.permissions, "customer")
    assert.include(t.permissions, "product")
    assert.approximately(t.expiresInDays, 364, 1)
    // The first sync started on its own: products arrive without any admin call.
    // (250 seeded, about 1% of them deleted)
    await eventually("products synced", async () => ((await tenant()).counts?.products >= 240 ? true : undefined), 30_000)
    // Scopes drive the sync: customers were not granted, so they are shown as such and never asked for.
    const settings = await (await admin(`/admin/tenants/${appId}/${businessId}/settings`)).json() as any
    assert.deepStrictEqual(settings.notGranted.map((n: any) => [n.resource, n.permission]), [["pos:/v3.0/customer/list", "customer"]])
    assert.notInclude(settings.resources, "pos:/v3.0/customer/list")
    const stock = await eventually("stock synced", async () => {
      const page = await (await admin(`/admin/tenants/${appId}/${businessId}/inventory?limit=1000`)).json() as any
      return page.items?.length > 0 ? page : undefined
    }, 30_000)
    const calls = (await sim.control.calls({ appId })).calls
    assert.deepStrictEqual(calls.filter((c) => c.outcome === "ERR_403" || c.outcome === "ERR_INVALID_DEPOT_ID"), [])
    assert.deepStrictEqual(calls.filter((c) => c.operation === "customer/list"), [], "a resource not granted is never called")
    // ('' is a product's totals, which name no depot)
    const depotsSeen = [...new Set(stock.items.map((i: any) => String(i.depotId)))].filter((d) => d !== "").sort()
    assert.deepStrictEqual(depotsSeen, ["1", "2"], "stock covers exactly the granted depots")

    // The same callback again (a replay): refused, nothing changes.
    const replay = await fetch(callback)
    assert.strictEqual(replay.status, 400)
    assert.match(await replay.text(), /already used/)
    assert.deepStrictEqual((await tenant()).grantedAt, t.grantedAt)

    // A forged state (signature changed): refused before the service is asked.
    const forged = new URL(callback)
    const state = forged.searchParams.get("state")!
    forged.searchParams.set("state", state.slice(0, -2) + (state.endsWith("AA") ? "BB" : "AA"))
    forged.searchParams.set("accessCode", "made-up")
    const refused = await fetch(forged)
    assert.strictEqual(refused.status, 400)
    const page = await refused.text()
    assert.match(page, /not made by this server/)
    assert.match(page, new RegExp(`href="${url}/connect/${appId}"`), "the page links to try again")
    assert.deepStrictEqual((await tenant()).grantedAt, t.grantedAt)
  }, 60_000)

  it("a second grant during steady webhooks and pulls replaces the token at once: no call fails across the switch", async () => {
    const before = await tenant()
    const since = (await sim.control.calls({ limit: 1 })).lastSeq
    const run = { stop: false }
    let webhooks = 0
    let passes = 0
    const hook = (id: number) =>
      `{"event":"productUpdate","businessId":${businessId},"webhooksVerifyToken":"${sim.demo!.verifyToken}","data":{"id":${id},"name":"switch ${id}","price":1}}`
    const traffic = (async () => {
      while (!run.stop) {
        const [w, p] = await Promise.all([
          fetch(`${url}/webhooks/${appId}`, { method: "POST", headers: { "content-type": "application/json" }, body: hook(900000 + webhooks) }),
          admin(`/admin/tenants/${appId}/${businessId}/sync?full=true`, { method: "POST" })
        ])
        assert.strictEqual(w.status, 200)
        assert.strictEqual(p.status, 200, await p.text())
        webhooks++
        passes++
      }
    })()
    await new Promise((r) => setTimeout(r, 500))
    const again = await fetch(await walk())
    assert.strictEqual(again.status, 200)
    assert.match(await again.text(), /connected again/)
    // Past the old token's overlap (2 s here): a server still using it would now be refused.
    await new Promise((r) => setTimeout(r, 3000))
    run.stop = true
    await traffic
    const after = await tenant()
    assert.isAbove(after.grantedAt, before.grantedAt)
    assert.strictEqual(after.status, "active")
    const calls = (await sim.control.calls({ appId, since })).calls
    assert.isAbove(passes, 2)
    assert.isAbove(calls.filter((c) => c.at > Date.now() - 1000 && c.outcome === "ok").length, 0, "pulls went on after the overlap")
    assert.deepStrictEqual(calls.filter((c) => c.outcome !== "ok" && c.operation !== "app/getaccesstoken"), [], "no call failed across the switch")
  }, 60_000)

  it("an expired access code and a wrong secret key are refused with a page saying why, changing nothing", async () => {
    const before = await tenant()
    const late = await walk()
    await new Promise((r) => setTimeout(r, 3100)) // the simulator's codes live 3 s here
    const expired = await fetch(late)
    assert.strictEqual(expired.status, 400)
    assert.match(await expired.text(), /expired or was already used/)

    assert.strictEqual((await setApp({ secretKey: "sk_not_the_right_one" })).status, 201)
    const wrong = await fetch(await walk())
    assert.strictEqual(wrong.status, 409)
    assert.match(await wrong.text(), /secret key/)
    assert.strictEqual((await setApp({ secretKey: sim.demo!.secretKey })).status, 201)
    assert.deepStrictEqual((await tenant()).grantedAt, before.grantedAt)
    assert.deepStrictEqual((await tenant()).permissions, before.permissions)
  }, 30_000)

  it("tokens are checked on a schedule; one the business revoked puts the tenant on hold with the connect link", async () => {
    const since = (await sim.control.calls({ limit: 1 })).lastSeq
    await eventually("a token check", async () =>
      (await sim.control.calls({ appId, since, operation: "app/checkaccesstoken" })).calls.some((c) => c.outcome === "ok") ? true : undefined, 10_000)
    assert.strictEqual((await sim.control.revokeGrant(businessId, appId)).revoked > 0, true)
    const held = await eventually("on hold", async () => {
      const t = await tenant()
      return t.status === "attention" ? t : undefined
    }, 15_000)
    assert.strictEqual(held.attention.code, "ERR_INVALID_ACCESS_TOKEN")
    assert.include(held.attention.message, `connect link: ${url}/connect/${appId}`)
  }, 30_000)
})
