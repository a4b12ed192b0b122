/**
 * The server in Kafka mode against the `kafka` project's broker, which runs with Kafka's default
 * limits (`message.max.bytes` 1,048,588), as a production cluster does:
 *
 * - a tenant whose pulled pages (100 full products each) hold far more than 1 MB in total is
 *   relayed completely, except the one page past the broker's limit, which is set aside visibly
 *   (logged, counted in /metrics) while /readyz stays ready;
 * - a broker that refuses every request turns the relay down in /metrics and /readyz.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable, readTopic } from "@ocs/kafka-broker/testing"
import { Ids } from "@ocs/protocol"
import { SimulatorControl } from "@ocs/simulator"
import { Kafka, logLevel } from "kafkajs"
import { eventually, type Proc, startServerProcess, startSimulatorProcess } from "../processes.ts"

const ADMIN_KEY = "relay-limits-admin-key-0123"
const PRODUCTS = 1500

const withAdmin = async <A>(f: (admin: ReturnType<Kafka["admin"]>) => Promise<A>): Promise<A> => {
  const admin = new Kafka({ brokers: [...kafkaBrokers()], logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  try {
    return await f(admin)
  } finally {
    await admin.disconnect()
  }
}

/** Some product ids of the tenant, read through the simulator's API. */
const productIds = async (sim: string, t: { readonly appId: string; readonly businessId: string; readonly accessToken: string }, n: number) => {
  const r = await fetch(`${sim}/pos/v3.0/product/list?appId=${t.appId}&businessId=${t.businessId}`, {
    method: "POST",
    headers: { authorization: t.accessToken, "content-type": "application/json" },
    body: `{"filters":{},"paginator":{"size":${n}}}`
  })
  return [...(await r.text()).matchAll(/"id"\s*:\s*"?(\d+)/g)].map((m) => m[1]!).slice(0, n)
}

const metric = async (url: string, line: RegExp): Promise<number | undefined> => {
  const text = await (await fetch(`${url}/metrics`, { headers: { "x-admin-key": ADMIN_KEY } })).text()
  const found = text.split("\n").find((l) => line.test(l))
  return found === undefined ? undefined : Number(found.trim().split(/\s+/).pop())
}

describe.skipIf(kafkaUnavailable())("sync server in Kafka mode on a broker with default limits", () => {
  let sim: { proc: Proc; url: string }
  let control: SimulatorControl

  beforeAll(async () => {
    sim = await startSimulatorProcess(["--products", "20"])
    control = new SimulatorControl(sim.url)
  }, 120_000)

  afterAll(async () => {
    await sim?.proc.stop()
  })

  const startServer = async (topic: string, kafka: Record<string, unknown> = {}) => {
    const t = await control.createTenant({ products: PRODUCTS, orders: 0, bills: 0, customers: 0, deletedRatio: 0 })
    const tenant = { appId: t.app.appId, businessId: t.business.businessId, verifyToken: t.app.verifyToken, accessToken: t.token.accessToken }
    const server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic, partitions: 3, ...kafka } },
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["product"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5, pageSize: 100 },
      webhooks: { silenceAlertSeconds: 3600 },
      tenants: [{ appId: tenant.appId, verifyTokens: [tenant.verifyToken], businesses: [{ businessId: tenant.businessId, accessToken: t.token.accessToken }] }]
    }, { OCS_ENCRYPTION_KEY: "56".repeat(32) })
    return { server, tenant }
  }

  it("relays pages past 1 MB in total; the one page past the broker's limit is set aside, visibly", async () => {
    const topic = `ocs-relay-limits-${Date.now()}`
    // Created first so the big product can be made before the server's first pull.
    const t = await control.createTenant({ products: PRODUCTS, orders: 0, bills: 0, customers: 0, deletedRatio: 0 })
    const listed = (await control.business(t.business.businessId)) as unknown as { counts: { products: number } }
    assert.strictEqual(listed.counts.products, PRODUCTS)
    // One product whose name alone is past the limit: the page holding it cannot be relayed.
    const [bigId] = await productIds(sim.url, { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }, 1)
    await control.updateProduct(t.business.businessId, bigId!, { name: `big-${"x".repeat(1_100_000)}` }, { silent: true })
    const server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic, partitions: 3 } },
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["product"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5, pageSize: 100 },
      webhooks: { silenceAlertSeconds: 3600 },
      tenants: [{ appId: t.app.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken }] }]
    }, { OCS_ENCRYPTION_KEY: "56".repeat(32) })
    try {
      const tenantUrl = `${server.url}/admin/tenants/${t.app.appId}/${t.business.businessId}`
      const counts = async () => ((await (await fetch(tenantUrl, { headers: { "x-admin-key": ADMIN_KEY } })).json()) as { counts: { products: number } }).counts
      // Every page but the one holding the big product reaches the read models through the topic.
      await eventually("every other page in the read models", async () => ((await counts()).products >= PRODUCTS - 100 ? true : undefined), 90_000, 500)
      assert.strictEqual((await counts()).products, PRODUCTS - 100)
      const big = await fetch(`${tenantUrl}/products/${bigId}`, { headers: { "x-admin-key": ADMIN_KEY } })
      assert.strictEqual(big.status, 404, "the page past the limit is not on the topic")
      await big.arrayBuffer()

      // The topic got more than 1 MB of pages, in requests under the broker's limit.
      const bytes = await withAdmin(async (admin) => {
        const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2, name: topic, configNames: ["max.message.bytes"] }] })
        return Number(described.resources[0]!.configEntries[0]!.configValue)
      })
      assert.strictEqual(bytes, 1_048_588, "the broker runs with Kafka's default limit")
      const values = (await readTopic(kafkaBrokers(), topic)).map((m) => m.value)
      const total = values.reduce((n, v) => n + v.length, 0)
      assert.isAbove(total, 1_048_588, `${values.length} messages of ${total} bytes`)
      assert.isTrue(values.every((v) => !v.includes("big-xxxx")), "the page past the limit is not on the topic")

      // Visible: counted in /metrics, named in the log; the relay itself is up and the server ready.
      assert.strictEqual(await metric(server.url, /^ocs_relay_dead_letters\b/), 1)
      assert.strictEqual(await metric(server.url, /^ocs_relay_max_request_bytes\b/), 1_048_588)
      assert.strictEqual(await metric(server.url, /^ocs_loop_up\{loop="event-log-relay"\}/), 1)
      assert.match(server.proc.output(), /RecordTooLarge|more than topic .* accepts \(1048588 bytes/)
      assert.match(server.proc.output(), new RegExp(Ids.tenantKey({ appId: t.app.appId, businessId: t.business.businessId })))
      const ready = await fetch(`${server.url}/readyz`)
      assert.strictEqual(ready.status, 200, await ready.text())
      const relay = (await (await fetch(`${server.url}/admin/relay`, { headers: { "x-admin-key": ADMIN_KEY } })).json()) as {
        status: { up: boolean; deadLetters: number; limitSource: string }
        deadLetters: ReadonlyArray<{ tenant: string; bytes: number; limitBytes: number }>
      }
      assert.strictEqual(relay.status.limitSource, `topic ${topic} max.message.bytes`, "the limit as the broker tells it")
      assert.strictEqual(relay.deadLetters.length, 1)
      assert.strictEqual(relay.deadLetters[0]!.tenant, Ids.tenantKey({ appId: t.app.appId, businessId: t.business.businessId }))
      assert.isAbove(relay.deadLetters[0]!.bytes, relay.deadLetters[0]!.limitBytes)

      // The operator's way out: raise the topic's limit, then redrive. The page reaches the read models.
      await withAdmin((admin) => admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: "max.message.bytes", value: String(4 * 1024 * 1024) }] }] }))
      const redrive = await fetch(`${server.url}/admin/relay/redrive`, { method: "POST", headers: { "x-admin-key": ADMIN_KEY } })
      assert.deepStrictEqual(await redrive.json(), { redriven: 1, stillTooLarge: 0 })
      await eventually("the redriven page in the read models", async () => ((await counts()).products === PRODUCTS ? true : undefined), 60_000, 500)
      const found = await fetch(`${tenantUrl}/products/${bigId}`, { headers: { "x-admin-key": ADMIN_KEY } })
      assert.strictEqual(found.status, 200)
      await found.arrayBuffer()
      assert.strictEqual(await metric(server.url, /^ocs_relay_dead_letters\b/), 0)
    } finally {
      const code = await server.proc.stop()
      assert.strictEqual(code, 0)
      // The Kafka-mode shutdown no longer tries a catch-up that only reads SQLite checkpoints.
      assert.notMatch(server.proc.output(), /final projection catch-up failed/)
    }
  }, 180_000)

  it("a broker that refuses every request turns the relay down: ocs_loop_up 0 and /readyz 503 with the reason", async () => {
    const topic = `ocs-relay-refused-${Date.now()}`
    const { server, tenant } = await startServer(topic, { relayDownAfterSeconds: 1 })
    try {
      const tenantUrl = `${server.url}/admin/tenants/${tenant.appId}/${tenant.businessId}`
      await eventually("the first pages in the read models", async () => {
        const body = (await (await fetch(tenantUrl, { headers: { "x-admin-key": ADMIN_KEY } })).json()) as { counts: { products: number } }
        return body.counts.products > 0 ? true : undefined
      }, 90_000, 500)
      assert.strictEqual((await fetch(`${server.url}/readyz`)).status, 200)
      // The topic removed (the broker creates none on demand): every produce is refused.
      await withAdmin((admin) => admin.deleteTopics({ topics: [topic] }))
      // A change pulled again: new pages for the relay to send.
      const [someId] = await productIds(sim.url, tenant, 1)
      await control.updateProduct(tenant.businessId, someId!, { name: "renamed while the topic is gone" }, { silent: true })
      await (await fetch(`${tenantUrl}/sync?full=true`, { method: "POST", headers: { "x-admin-key": ADMIN_KEY } })).arrayBuffer()
      const refused = await eventually("/readyz not ready for the relay", async () => {
        const r = await fetch(`${server.url}/readyz`)
        const body = (await r.json()) as { status: string; error?: string; loopsDown?: ReadonlyArray<string> }
        return r.status === 503 && body.loopsDown?.includes("event-log-relay") ? body : undefined
      }, 60_000, 250)
      assert.match(refused.error ?? "", /loop event-log-relay is down: Kafka has not acknowledged a relay request for \d+ s/)
      assert.strictEqual(await metric(server.url, /^ocs_loop_up\{loop="event-log-relay"\}/), 0)
    } finally {
      await server.proc.stop()
    }
  }, 180_000)
})
