/**
 * Two servers sharing pulls share their tenant registry and sync state through compacted
 * topics: a tenant registered on one server is pulled by its owner, and when the owner dies in
 * the middle of a full sync, the server that takes the tenant over resumes from the cursor the
 * dead one saved, instead of reading the first pages again, and loses no page: the survivor's
 * read models hold every product although the dead owner's outbox is never relayed.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { SimulatorControl } from "@ocs/simulator"
import { tenantPartition as partitionOf } from "@ocs/sync/Ownership"
import { eventually, type Proc, startServerProcess, startSimulatorProcess } from "../processes.ts"

const ADMIN_KEY = "shared-state-admin-key-01"
const TOPIC = `ocs-shared-state-${Date.now()}`
const OWNER_PARTITIONS = 4
const PRODUCTS = 120
const PAGE_SIZE = 5
const PAGES = Math.ceil(PRODUCTS / PAGE_SIZE)

describe.skipIf(kafkaUnavailable())("sync state shared by the servers of one cluster", () => {
  let sim: { proc: Proc; url: string }
  let control: SimulatorControl
  const servers: Array<{ proc: Proc; url: string }> = []
  let tenant: { appId: string; businessId: string; verifyToken: string; accessToken: string }

  beforeAll(async () => {
    sim = await startSimulatorProcess()
    control = new SimulatorControl(sim.url)
    const t = await control.createTenant({ products: PRODUCTS, orders: 0 })
    tenant = { appId: t.app.appId, businessId: t.business.businessId, verifyToken: t.app.verifyToken, accessToken: t.token.accessToken }
    // Slow pages, so that the full sync is still running when its owner is killed.
    await control.addFault({ kind: "latency", ms: 200, appId: tenant.appId, businessId: tenant.businessId, operation: "product/list" })
    const config = {
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: 3, sharedPulls: { partitions: OWNER_PARTITIONS, handoverSeconds: 1 } } },
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["product"], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 5, pageSize: PAGE_SIZE },
      webhooks: { silenceAlertSeconds: 3600 },
      tenants: []
    }
    servers.push(await startServerProcess(config, { OCS_ENCRYPTION_KEY: "67".repeat(32) }))
    servers.push(await startServerProcess(config, { OCS_ENCRYPTION_KEY: "67".repeat(32) }))
  }, 180_000)

  afterAll(async () => {
    for (const s of servers) await s.proc.stop("SIGKILL")
    await sim?.proc.stop()
  })

  const call = async (server: { url: string }, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: r.status, body: (await r.json()) as any }
  }
  const partitionsOf = async (server: { url: string }) => new Set<number>((await call(server, "GET", "/admin/ownership")).body.partitions ?? [])
  const productCalls = async () =>
    (await control.calls({ appId: tenant.appId, businessId: tenant.businessId, operation: "product/list", limit: 10_000 })).calls.length

  it("a server that takes a tenant over resumes the full sync from the dead owner's cursor", async () => {
    const [pa] = await eventually("the group's assignment settling on both servers", async () => {
      const pa = await partitionsOf(servers[0]!)
      const pb = await partitionsOf(servers[1]!)
      const disjoint = [...pa].every((p) => !pb.has(p))
      return disjoint && pa.size > 0 && pb.size > 0 && pa.size + pb.size === OWNER_PARTITIONS ? [pa, pb] : undefined
    }, 60_000, 500)
    const owner = pa.has(partitionOf(tenant.appId, tenant.businessId, OWNER_PARTITIONS)) ? 0 : 1
    const survivor = servers[1 - owner]!
    // Registered once the owners are settled, through the admin API of the server that does
    // not own it: the registry is shared, so the owner learns the tenant (and its sealed
    // token) from the topic and starts the sync.
    assert.strictEqual((await call(survivor, "POST", "/admin/apps", { appId: tenant.appId, verifyTokens: [tenant.verifyToken] })).status, 201)
    assert.strictEqual((await call(survivor, "POST", "/admin/tenants", { appId: tenant.appId, businessId: tenant.businessId, accessToken: tenant.accessToken })).status, 201)

    const before = await eventually("the owner half-way through the full sync", async () => {
      const n = await productCalls()
      return n >= 6 ? n : undefined
    }, 60_000, 50)
    assert.isBelow(before, PAGES, "the full sync ended before the owner could be killed")
    await servers[owner]!.proc.stop("SIGKILL")

    const tenantNow = async () => (await call(survivor, "GET", `/admin/tenants/${tenant.appId}/${tenant.businessId}`)).body
    const state = await eventually("the survivor completing the full sync", async () => {
      const product = ((await tenantNow()).sync ?? []).find((s: any) => String(s.resource).endsWith("product/list"))
      return product?.fullCompletedAt != null ? product : undefined
    }, 120_000, 500)
    // Every page reached the survivor's read models, the dead owner's last ones included.
    let products = 0
    await eventually("every product in the survivor's read models", async () => {
      products = (await tenantNow()).counts?.products ?? 0
      return products === PRODUCTS ? true : undefined
    }, 15_000, 200).catch(() => assert.fail(`${products} of ${PRODUCTS} products in the survivor's read models: a page was lost in the takeover`))
    assert.isNull(state.cursor)
    const total = await productCalls()
    // Restarting from the first page would cost `before` calls again; resuming costs at most
    // the page that was in flight when the owner died, the page before it if its records were
    // not on the topic yet (its cursor is shared only then: SharedSyncState.ts), and the last,
    // empty, page.
    assert.isAtMost(total, PAGES + 3, `${total} product/list calls for ${PAGES} pages (${before} before the kill)`)
    console.log(`shared sync state: ${before} pages by the owner, ${total} calls in all for ${PAGES} pages`)
  }, 240_000)
})
