/**
 * Small edges of the operator surface, against the real server process: an existing data
 * folder with mode 0755 is tightened to 0700 at start; a console's `/admin/stream` ends when
 * its session is signed out; redriving an unknown plugin (`nosuch`, `__proto__`, `toString`)
 * is 404, not 500.
 */
import { assert, describe, it } from "vitest"
import * as Fs from "node:fs"
import * as Http from "node:http"
import { ADMIN_KEY, request } from "./support/harness.ts"
import { oneServerSuite } from "./support/suite.ts"

const edges = oneServerSuite("ocs-rel-edges-", {
  prepare: (server) => {
    // A folder made by hand (or by an earlier release), readable by everyone.
    Fs.mkdirSync(server.dataDir, { recursive: true, mode: 0o755 })
    Fs.chmodSync(server.dataDir, 0o755)
  }
})

describe("operator edges", () => {
  it("tightens an existing data folder to 0700 at start", () => {
    assert.strictEqual(Fs.statSync(edges.server.dataDir).mode & 0o777, 0o700)
  })

  it("answers 404 to a redrive of a plugin that does not run here", async () => {
    for (const name of ["nosuch", "__proto__", "toString", "constructor"]) {
      const a = await request(`${edges.server.url}/admin/plugins/redrive?plugin=${name}`, { method: "POST", headers: { "x-admin-key": ADMIN_KEY } })
      assert.strictEqual(a.status, 404, `${name}: ${a.text}`)
      assert.include(a.text, "no plugin named")
    }
  })

  it("ends a console's event stream at sign-out", async () => {
    const host = new URL(edges.server.url).host
    const signIn = await request(`${edges.server.url}/ui/session`, { method: "POST", body: JSON.stringify({ key: ADMIN_KEY }), headers: { origin: `http://${host}`, host } })
    assert.strictEqual(signIn.status, 200, signIn.text)
    const cookie = String(signIn.headers["set-cookie"]).split(";")[0]!
    const csrf = JSON.parse(signIn.text).csrf as string

    let events = 0
    let ended = false
    const streamed = new Promise<void>((resolve, reject) => {
      const req = Http.get(`${edges.server.url}/admin/stream`, { headers: { cookie } }, (res) => {
        assert.strictEqual(res.statusCode, 200)
        res.on("data", (d: Buffer) => {
          events += d.toString().split("event: snapshot").length - 1
        })
        res.on("end", () => {
          ended = true
          resolve()
        })
        res.on("error", reject)
      })
      req.on("error", reject)
      // Bounded: a stream that outlives sign-out fails the test instead of hanging it.
      setTimeout(() => {
        req.destroy()
        resolve()
      }, 20_000).unref()
    })
    // Wait for the first snapshot, then sign out.
    for (let i = 0; i < 100 && events === 0; i++) await new Promise((r) => setTimeout(r, 100))
    assert.isAbove(events, 0, "the stream was live")
    const out = await request(`${edges.server.url}/ui/session/end`, { method: "POST", body: "{}", headers: { cookie, origin: `http://${host}`, host, "x-csrf-token": csrf } })
    assert.strictEqual(out.status, 200, out.text)
    await streamed
    assert.isTrue(ended, "the stream ended after sign-out")
  }, 60_000)
})
