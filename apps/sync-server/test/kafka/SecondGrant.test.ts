/**
 * A second grant on a Kafka cluster (docs/architecture.md §4.32): two server processes share
 * the tenant registry's compacted topic; the business is granted again through server A while
 * both take webhooks and pull, and server B checks the token every 0.2 s. A check on B can
 * answer about the old token after the grant (the service cuts its expiry to the overlap) and
 * write it back before the grant reaches B; grants are ordered by their issue time, so that
 * write never wins. Past the overlap (2 s here) a server still on the old token would be
 * refused: no call is, and both servers pull with the new token.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { formOf } from "../../src/boot/Demo.ts"
import { eventually, type Proc, startServerProcess } from "../processes.ts"

const ADMIN_KEY = "second-grant-admin-key-01"
const TOPIC = `ocs-second-grant-${Date.now()}`
const OVERLAP_MS = 2000

describe.skipIf(kafkaUnavailable())("a second grant on the cluster", () => {
  let sim: RunningSimulator
  const servers: Array<{ proc: Proc; url: string }> = []
  let appId = ""
  let businessId = ""

  const admin = async (server: { url: string }, path: string, init: RequestInit = {}) => {
    const r = await fetch(`${server.url}${path}`, { ...init, headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json", ...init.headers } })
    return { status: r.status, body: await r.json() as any }
  }
  const tenantOn = (server: { url: string }) => admin(server, `/admin/tenants/${appId}/${businessId}`)

  /** The browser's walk through server A: connect link, grant page, its form as served, callback. */
  const grant = async (server: { url: string }) => {
    const start = await fetch(`${server.url}/connect/${appId}`, { redirect: "manual" })
    assert.strictEqual(start.status, 302)
    const grantPage = start.headers.get("location")!
    const form = formOf(await (await fetch(grantPage)).text(), grantPage)!
    const posted = await fetch(form.action, { method: "POST", redirect: "manual", body: form.fields })
    assert.strictEqual(posted.status, 302)
    const done = await fetch(posted.headers.get("location")!)
    const page = await done.text()
    assert.strictEqual(done.status, 200, page)
    return page
  }

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, products: 300, orders: 0, bills: 0, customers: 0, tokenOverlapMs: OVERLAP_MS })
    appId = sim.demo!.appId
    businessId = sim.demo!.businessId
    const config = {
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      // Servers that share pulls share the tenant registry (docs/architecture.md §4.19).
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: 3, sharedPulls: { partitions: 4, handoverSeconds: 1 } } },
      api: { posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl },
      sync: { resources: ["product"], intervalSeconds: 3600, reconcileSeconds: 86_400 },
      webhooks: { silenceAlertSeconds: 3600 },
      connect: { checkIntervalSeconds: 0.2 },
      tenants: [{ appId, verifyTokens: [sim.demo!.verifyToken], secretKey: sim.demo!.secretKey }]
    }
    const started = await Promise.all([0, 1].map(() => startServerProcess(config, { OCS_ENCRYPTION_KEY: "6a".repeat(32) })))
    servers.push(...started)
  }, 120_000)

  afterAll(async () => {
    for (const s of servers) await s.proc.stop("SIGKILL")
    await sim?.close()
  })

  it("granted again through A while B checks tokens: no call refused after the overlap, both servers on the new token", async () => {
    const [a, b] = servers as [{ proc: Proc; url: string }, { proc: Proc; url: string }]
    const keyed = await admin(a, "/admin/apps", {
      method: "POST",
      body: JSON.stringify({ appId, verifyTokens: [sim.demo!.verifyToken], secretKey: sim.demo!.secretKey, publicUrl: a.url })
    })
    assert.strictEqual(keyed.status, 201)
    assert.match(await grant(a), /is now connected/)
    const first = await eventually("the first grant on B", async () => {
      const t = await tenantOn(b)
      if (t.status === 200 && t.body.status === "active" && t.body.grantedAt !== null) return t.body.grantedAt as number
      throw new Error(`B answers ${t.status}: ${JSON.stringify(t.body).slice(0, 300)}`)
    }, 20_000, 50)

    const since = (await sim.control.calls({ limit: 1 })).lastSeq
    const run = { stop: false }
    let webhooks = 0
    let pulls = 0
    const hook = (id: number) =>
      `{"event":"productUpdate","businessId":${businessId},"webhooksVerifyToken":"${sim.demo!.verifyToken}","data":{"id":${id},"name":"switch ${id}","price":1}}`
    // Steady traffic on both servers: a webhook and a full pull each, over and over.
    const traffic = Promise.all([a, b].map(async (server) => {
      while (!run.stop) {
        const [w, p] = await Promise.all([
          fetch(`${server.url}/webhooks/${appId}`, { method: "POST", headers: { "content-type": "application/json" }, body: hook(900_000 + webhooks) }),
          admin(server, `/admin/tenants/${appId}/${businessId}/sync?full=true`, { method: "POST" })
        ])
        assert.strictEqual(w.status, 200)
        assert.strictEqual(p.status, 200)
        webhooks++
        pulls++
      }
    }))
    // Its failure is thrown below, once the traffic has stopped.
    const ended: Promise<unknown> = traffic.then(() => undefined, (e: unknown) => e ?? new Error("the traffic failed"))
    let switched = 0
    let second = 0
    try {
      await new Promise((r) => setTimeout(r, 400))
      assert.match(await grant(a), /connected again/)
      switched = Date.now()
      second = (await tenantOn(a)).body.grantedAt as number
      assert.isAbove(second, first)
      await eventually("the second grant on B", async () => ((await tenantOn(b)).body.grantedAt === second ? true : undefined), 20_000, 50)
      // Past the old token's overlap, with B's checks running all along.
      await new Promise((r) => setTimeout(r, OVERLAP_MS + 1000 - (Date.now() - switched)))
    } finally {
      // The traffic ends before the servers do, whatever failed above.
      run.stop = true
      await ended
    }
    const trafficFailure = await ended
    if (trafficFailure !== undefined) throw trafficFailure

    const early = (await sim.control.calls({ appId, since, limit: 100_000 })).calls.filter((c) => c.outcome === "ERR_INVALID_ACCESS_TOKEN")
    assert.deepStrictEqual(early.map((c) => `${c.operation} ${c.at - switched} ms after the grant`), [], `no call refused across the switch; A: ${JSON.stringify((await tenantOn(a)).body.attention)} B: ${JSON.stringify((await tenantOn(b)).body.attention)}`)
    // Each server is asked to pull once more, past the overlap (the tenant's owner does): only
    // the new token is accepted now.
    const after = (await sim.control.calls({ limit: 1 })).lastSeq
    for (const server of [a, b]) {
      const p = await admin(server, `/admin/tenants/${appId}/${businessId}/sync?full=true`, { method: "POST" })
      assert.strictEqual(p.status, 200)
      const failed = p.body.reports.filter((r: any) => r.reason !== null && !String(r.reason).startsWith("another server owns"))
      assert.deepStrictEqual(failed, [], `every resource ran or was left to its owner: ${JSON.stringify(failed)}`)
      const t = (await tenantOn(server)).body
      assert.strictEqual(t.status, "active", `${server.url}: ${JSON.stringify(t.attention)}`)
      assert.strictEqual(t.grantedAt, second)
    }
    const calls = (await sim.control.calls({ appId, since, limit: 100_000 })).calls
    const refused = calls.filter((c) => c.outcome === "ERR_INVALID_ACCESS_TOKEN")
    assert.deepStrictEqual(refused.map((c) => `${c.operation} ${c.at - switched} ms after the grant`), [], "no call refused across the switch")
    const checks = calls.filter((c) => c.operation === "app/checkaccesstoken" && c.at > switched)
    const lastPulls = calls.filter((c) => c.seq > after && c.operation === "product/list")
    assert.isAtLeast(lastPulls.length, 3, "the owner pulled every page past the overlap")
    assert.isTrue(lastPulls.every((c) => c.outcome === "ok"))
    assert.isAbove(checks.length, 10, "the servers kept checking the token across the switch")
    console.log(`second grant on the cluster: ${webhooks} webhooks, ${pulls} pulls, ${checks.length} token checks after the grant, 0 refused`)
  }, 60_000)
})
