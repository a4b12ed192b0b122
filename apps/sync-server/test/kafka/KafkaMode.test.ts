/**
 * The server in Kafka mode against the real broker of the `kafka` project: pulls and webhooks
 * go through the local outbox to the topic, and the read models follow from the topic.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable, readTopic } from "@ocs/kafka-broker/testing"
import { SimulatorControl } from "@ocs/simulator"
import * as Fs from "node:fs"
import { Ids } from "@ocs/protocol"
import { eventually, type Proc, startServerProcess, startSimulatorProcess } from "../processes.ts"

const ADMIN_KEY = "kafka-mode-admin-key-0123"
const TOPIC = `ocs-server-${Date.now()}`

describe.skipIf(kafkaUnavailable())("sync server in Kafka mode", () => {
  let sim: { proc: Proc; url: string }
  let server: { proc: Proc; url: string }
  let control: SimulatorControl
  let tenant: { appId: string; businessId: string; verifyToken: string }

  beforeAll(async () => {
    sim = await startSimulatorProcess(["--products", "20"])
    control = new SimulatorControl(sim.url)
    const t = await control.createTenant({ products: 300, orders: 10 })
    tenant = { appId: t.app.appId, businessId: t.business.businessId, verifyToken: t.app.verifyToken }
    server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: 3 } },
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["product", "order", "bill"], intervalSeconds: 2, reconcileSeconds: 3600, overlapSeconds: 5 },
      webhooks: { silenceAlertSeconds: 3600 },
      tenants: [{ appId: tenant.appId, verifyTokens: [tenant.verifyToken], businesses: [{ businessId: tenant.businessId, accessToken: t.token.accessToken }] }]
    }, { OCS_ENCRYPTION_KEY: "55".repeat(32) })
  }, 120_000)

  afterAll(async () => {
    const code = await server?.proc.stop()
    await sim?.proc.stop()
    assert.strictEqual(code, 0)
  })

  it("runs under the throughput heap profile: launched compact, re-executed in place", () => {
    // Launched with the compact profile's flags (as ./ocs start launches), the same process
    // now runs without them (docs/architecture.md §4.20).
    const pid = server.proc.child.pid!
    const cmdline = Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
    assert.notInclude(cmdline, "--optimize-for-size")
    assert.include(Fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0"), "OCS_HEAP_PROFILE_APPLIED=throughput")
  })

  const counts = async () => {
    const r = await fetch(`${server.url}/admin/tenants/${tenant.appId}/${tenant.businessId}`, { headers: { "x-admin-key": ADMIN_KEY } })
    return ((await r.json()) as { counts: { products: number; orders: number } }).counts
  }

  it("pulls and webhooks reach the topic keyed by tenant, and the read models follow", async () => {
    const expected = (await control.business(tenant.businessId)) as unknown as { counts: { products: number } }
    await eventually("the full sync in the read models", async () => ((await counts()).products === expected.counts.products ? true : undefined), 60_000, 500)
    await control.enableWebhooks(tenant.appId, { callbackUrl: `${server.url}/webhooks/${tenant.appId}`, verifyToken: tenant.verifyToken })
    await control.addOrder(tenant.businessId, { customerName: "via kafka", products: [] })
    await control.drainDeliveries()
    await eventually("the webhook's order in the read models", async () => ((await counts()).orders === 11 ? true : undefined), 30_000, 500)
    // The tenant activity follows the topic on the projection's subscription: the webhook is
    // the tenant's latest (for the silence alert).
    const activity = await eventually("the webhook noted as the tenant's latest", async () => {
      const r = await fetch(`${server.url}/admin/tenants/${tenant.appId}/${tenant.businessId}`, { headers: { "x-admin-key": ADMIN_KEY } })
      const body = (await r.json()) as { lastWebhookAt: number | null }
      return body.lastWebhookAt === null ? undefined : body.lastWebhookAt
    }, 30_000, 200)
    assert.isAbove(activity, 0)

    // The topic holds the records, every one keyed appId:businessId.
    const messages = await readTopic(kafkaBrokers(), TOPIC)
    assert.isAtLeast(messages.length, 5, "pages and the webhook were relayed to Kafka")
    const keys = new Set(messages.map((m) => m.key))
    assert.isTrue(keys.has(Ids.tenantKey(tenant)))
  }, 120_000)
})
