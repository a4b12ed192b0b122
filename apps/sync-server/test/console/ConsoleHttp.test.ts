/**
 * The console's guards as plain HTTP, against the real servers: sign-in, the session cookie,
 * CSRF and origin checks on actions, the content security policy, the key header still
 * working, the snapshot stream and the entity-history route.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Fs from "node:fs"
import { assetsDir, build } from "../../console/build.ts"
import { ADMIN_KEY, admin, adminWhen, type Servers, startServers } from "./servers.ts"

let servers: Servers
let origin: string

beforeAll(async () => {
  servers = await startServers()
  origin = servers.server.url
}, 120_000)

afterAll(async () => {
  assert.strictEqual(await servers?.stop(), 0, "the server stops cleanly, open streams or not")
})

const signIn = async (key = ADMIN_KEY, headers: Record<string, string> = { origin }) => {
  const r = await fetch(`${origin}/ui/session`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ key }) })
  const text = await r.text()
  return { status: r.status, cookie: r.headers.get("set-cookie"), body: JSON.parse(text) }
}

const tenantPath = () => `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}`

const act = (path: string, headers: Record<string, string>) => fetch(`${origin}${path}`, { method: "POST", headers })

describe("console sign-in and sessions", () => {
  it("refuses the admin API without a key or a session", async () => {
    assert.strictEqual((await fetch(`${origin}/admin/tenants`)).status, 401)
    assert.strictEqual((await fetch(`${origin}/admin/stream`)).status, 401)
    assert.strictEqual((await fetch(`${origin}/admin/tenants`, { headers: { cookie: "ocs_session=made-up" } })).status, 401)
  })

  it("keeps the JSON admin API working with the key header", async () => {
    const r = await admin(servers, "/admin/tenants")
    assert.strictEqual(r.status, 200)
    assert.ok(r.body.tenants.some((t: any) => t.businessId === servers.demo.businessId))
  })

  it("refuses a wrong key, a cross-origin sign-in and one without an Origin", async () => {
    const wrong = await signIn("not-the-key")
    assert.strictEqual(wrong.status, 401)
    assert.strictEqual(wrong.cookie, null)
    assert.strictEqual((await signIn(ADMIN_KEY, { origin: "http://evil.example" })).status, 403)
    assert.strictEqual((await signIn(ADMIN_KEY, {})).status, 403)
  })

  it("gives an HttpOnly, SameSite=Strict session cookie that reads the admin API", async () => {
    const s = await signIn()
    assert.strictEqual(s.status, 200)
    const cookie = s.cookie!
    assert.match(cookie, /^ocs_session=[\w-]{40,};/)
    for (const attr of ["HttpOnly", "SameSite=Strict", "Path=/"]) assert.include(cookie, attr)
    assert.notInclude(cookie, "Secure", "no TLS here, so no Secure flag")
    const session = cookie.split(";")[0]!
    const r = await fetch(`${origin}/admin/tenants`, { headers: { cookie: session } })
    assert.strictEqual(r.status, 200)
    const me: any = await (await fetch(`${origin}/ui/session`, { headers: { cookie: session } })).json()
    assert.deepStrictEqual(me.signedIn, true)
    assert.strictEqual(me.csrf, s.body.csrf)
  })

  it("refuses actions without the CSRF token, with a wrong one, or from another origin", async () => {
    const s = await signIn()
    const session = s.cookie!.split(";")[0]!
    const pause = `${tenantPath()}/pause`
    assert.strictEqual((await act(pause, { cookie: session, origin })).status, 403)
    assert.strictEqual((await act(pause, { cookie: session, origin, "x-csrf-token": "wrong" })).status, 403)
    assert.strictEqual((await act(pause, { cookie: session, origin: "http://evil.example", "x-csrf-token": s.body.csrf })).status, 403)
    assert.strictEqual((await act(pause, { cookie: session, "x-csrf-token": s.body.csrf })).status, 403, "no Origin header")
    assert.strictEqual((await admin(servers, tenantPath())).body.status, "active", "nothing was paused")
    // With both, the action runs.
    assert.strictEqual((await act(pause, { cookie: session, origin, "x-csrf-token": s.body.csrf })).status, 200)
    assert.strictEqual((await admin(servers, tenantPath())).body.status, "paused")
    assert.strictEqual((await act(`${tenantPath()}/resume`, { cookie: session, origin, "x-csrf-token": s.body.csrf })).status, 200)
    assert.strictEqual((await admin(servers, tenantPath())).body.status, "active")
  })

  it("signs out: the cookie is cleared and the session ends", async () => {
    const s = await signIn()
    const session = s.cookie!.split(";")[0]!
    assert.strictEqual((await act("/ui/session/end", { cookie: session, origin })).status, 403, "sign-out needs the CSRF token too")
    const out = await act("/ui/session/end", { cookie: session, origin, "x-csrf-token": s.body.csrf })
    assert.strictEqual(out.status, 200)
    assert.match(out.headers.get("set-cookie") ?? "", /^ocs_session=;.*Max-Age=0/)
    assert.strictEqual((await fetch(`${origin}/admin/tenants`, { headers: { cookie: session } })).status, 401)
  })
})

describe("console page", () => {
  it("is served with a content security policy and no inline script", async () => {
    const r = await fetch(`${origin}/ui`)
    assert.strictEqual(r.status, 200)
    const csp = r.headers.get("content-security-policy") ?? ""
    assert.include(csp, "script-src 'self'")
    assert.notInclude(csp, "unsafe-inline")
    assert.include(csp, "frame-ancestors 'none'")
    const page = await r.text()
    assert.notMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/, "every script is a file")
    assert.notMatch(page, /\sstyle=|<style/, "no inline style")
    const js = await fetch(`${origin}/ui/app.js`)
    assert.strictEqual(js.status, 200)
    assert.match(js.headers.get("content-type") ?? "", /javascript/)
  })

  it("ships assets that match a fresh build of console/src", async () => {
    const fresh = await build()
    const stale = "console/assets differ from console/src: run ./ocs --filter @ocs/sync-server build:console"
    assert.ok(Fs.readFileSync(assetsDir + "app.js", "utf8") === fresh.js, stale)
    assert.ok(Fs.readFileSync(assetsDir + "app.css", "utf8") === fresh.css, stale)
  })
})

describe("live feed and history", () => {
  it("streams snapshots as server-sent events to a session", async () => {
    const s = await signIn()
    const controller = new AbortController()
    const r = await fetch(`${origin}/admin/stream`, { headers: { cookie: s.cookie!.split(";")[0]! }, signal: controller.signal })
    assert.strictEqual(r.status, 200)
    assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/)
    const reader = r.body!.getReader()
    let text = ""
    while (!text.includes("\n\n")) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    controller.abort()
    const event = /^event: snapshot\ndata: (.*)\n\n/.exec(text)
    assert.ok(event, text.slice(0, 200))
    const snapshot = JSON.parse(event[1]!)
    assert.ok(snapshot.tenants.list.some((t: any) => t.businessId === servers.demo.businessId))
    assert.strictEqual(snapshot.tenants.total, snapshot.tenants.byStatus.active + snapshot.tenants.byStatus.paused + snapshot.tenants.byStatus.attention)
  })

  it("answers an entity's history with the records' exact bodies, and 400 for a bad id", async () => {
    // The demo's first product pass may still be running on a busy machine.
    const products = await adminWhen(servers, `${tenantPath()}/products?limit=1`, (r) => r.status === 200 && r.body.items?.length > 0)
    const id = String(products.body.items[0].id)
    const h = await admin(servers, `${tenantPath()}/history/${id}`)
    assert.strictEqual(h.status, 200)
    assert.ok(h.body.records.length >= 1)
    for (const r of h.body.records) assert.include(r.body, id, "each record's body names the entity")
    assert.strictEqual((await admin(servers, `${tenantPath()}/history/abc`)).status, 400)
    assert.strictEqual((await admin(servers, `/admin/tenants/${servers.demo.appId}/999999/history/${id}`)).status, 404)
  })
})

// Last: it leaves sign-in blocked for a minute on this server.
describe("guessing the key", () => {
  it("is refused with 429 after too many wrong keys, while the key header keeps working", async () => {
    let tries = 0
    while ((await signIn(`guess-${tries}`)).status === 401 && tries < 30) tries++
    assert.isBelow(tries, 30, "sign-in became blocked")
    const right = await signIn()
    assert.strictEqual(right.status, 429, "even the right key waits out the minute")
    assert.strictEqual(right.cookie, null)
    assert.strictEqual((await admin(servers, "/admin/tenants")).status, 200)
  })
})
