/**
 * Throttles are per source address, against the real server process, each client on its own
 * loopback address: wrong console keys from one address do not stop a sign-in from another;
 * wrong `x-admin-key` headers from one address get 429 after the bound (even the right key,
 * while blocked) and another address is served; a wrong-token flood from one address does not
 * stop valid deliveries from that same address.
 */
import { assert, describe, it } from "vitest"
import { ADMIN_KEY, envelope, request, webhookRows } from "./support/harness.ts"
import { oneServerSuite } from "./support/suite.ts"

const throttles = oneServerSuite("ocs-rel-throttles-")

const signIn = (key: string, localAddress: string) => {
  const host = new URL(throttles.server.url).host
  return request(`${throttles.server.url}/ui/session`, { method: "POST", body: JSON.stringify({ key }), headers: { origin: `http://${host}`, host }, localAddress })
}

describe("throttles per source address", () => {
  it("console sign-in: 20 wrong keys block that address only", async () => {
    const wrong = []
    for (let i = 0; i < 20; i++) wrong.push((await signIn(`wrong-key-${i}-0123456789`, "127.0.3.1")).status)
    assert.deepStrictEqual([...new Set(wrong)], [401])
    assert.strictEqual((await signIn(ADMIN_KEY, "127.0.3.1")).status, 429, "the guessing address waits")
    const other = await signIn(ADMIN_KEY, "127.0.3.2")
    assert.strictEqual(other.status, 200, "the right key from another address signs in")
    assert.match(String(other.headers["set-cookie"]), /ocs_session=/)
  })

  it("admin key header: 429 with retry-after past the bound from one address, another address served", async () => {
    const statuses = new Map<number, number>()
    for (let i = 0; i < 200; i++) {
      const a = await request(`${throttles.server.url}/admin/tenants`, { headers: { "x-admin-key": `wrong-admin-key-${i}` }, localAddress: "127.0.3.3" })
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
    }
    console.log(`[throttles] 200 wrong x-admin-key headers from one address: ${[...statuses].map(([s, c]) => `${s}=${c}`).join(" ")}`)
    assert.strictEqual(statuses.get(401), 20)
    assert.strictEqual(statuses.get(429), 180)
    const blocked = await request(`${throttles.server.url}/admin/tenants`, { headers: { "x-admin-key": ADMIN_KEY }, localAddress: "127.0.3.3" })
    assert.strictEqual(blocked.status, 429, "while blocked even the right key is refused: a guess cannot be confirmed")
    assert.isAbove(Number(blocked.headers["retry-after"]), 0)
    const other = await request(`${throttles.server.url}/admin/tenants`, { headers: { "x-admin-key": ADMIN_KEY }, localAddress: "127.0.3.4" })
    assert.strictEqual(other.status, 200, "another address is served")
  })

  it("a wrong-token flood from one address does not stop valid deliveries from it", async () => {
    const url = `${throttles.server.url}/webhooks/${throttles.tenant.appId}`
    const before = webhookRows(throttles.server.dataDir)
    const statuses = new Map<number, number>()
    for (let i = 0; i < 100; i++) {
      const a = await request(url, { body: envelope(throttles.tenant, "productAdd", { id: i }, `wrong-${i}`), localAddress: "127.0.3.5" })
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
    }
    const valid = []
    for (let i = 0; i < 5; i++) valid.push((await request(url, { body: envelope(throttles.tenant, "productAdd", { id: 1000 + i, name: "real" }), localAddress: "127.0.3.5" })).status)
    console.log(`[throttles] 100 wrong tokens from one address: ${[...statuses].map(([s, c]) => `${s}=${c}`).join(" ")}; then valid deliveries from it: ${valid.join(",")}`)
    assert.strictEqual(statuses.get(401), 20)
    assert.strictEqual(statuses.get(429), 80)
    assert.deepStrictEqual(valid, [200, 200, 200, 200, 200])
    assert.strictEqual(webhookRows(throttles.server.dataDir) - before, 5)
  })
})
