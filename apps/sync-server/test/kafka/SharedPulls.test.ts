/**
 * Two servers on one topic: both take webhooks, each tenant's pulls are owned by one server
 * at a time, and when a server dies its tenants move to the other.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { SimulatorControl } from "@ocs/simulator"
import { tenantPartition as partitionOf } from "@ocs/sync/Ownership"
import { eventually, type Proc, startServerProcess, startSimulatorProcess } from "../processes.ts"

const ADMIN_KEY = "shared-pulls-admin-key-01"
const TOPIC = `ocs-shared-${Date.now()}`
const TENANTS = 8

describe.skipIf(kafkaUnavailable())("several servers share pulls through a consumer group", () => {
  let sim: { proc: Proc; url: string }
  const servers: Array<{ proc: Proc; url: string }> = []
  const tenants: Array<{ appId: string; businessId: string }> = []

  beforeAll(async () => {
    sim = await startSimulatorProcess(["--products", "10"])
    const control = new SimulatorControl(sim.url)
    const apps = []
    for (let i = 0; i < TENANTS; i++) {
      const t = await control.createTenant({ products: 40, orders: 2 })
      tenants.push({ appId: t.app.appId, businessId: t.business.businessId })
      apps.push({ appId: t.app.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken }] })
    }
    const config = {
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: 3, sharedPulls: { partitions: 16, handoverSeconds: 1 } } },
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["order"], intervalSeconds: 1, reconcileSeconds: 3600, overlapSeconds: 5 },
      webhooks: { silenceAlertSeconds: 3600 },
      tenants: apps
    }
    servers.push(await startServerProcess(config, { OCS_ENCRYPTION_KEY: "66".repeat(32) }))
    servers.push(await startServerProcess(config, { OCS_ENCRYPTION_KEY: "66".repeat(32) }))
  }, 180_000)

  afterAll(async () => {
    for (const s of servers) await s.proc.stop("SIGKILL")
    await sim?.proc.stop()
  })

  const get = async (server: { url: string }, path: string) =>
    (await (await fetch(`${server.url}${path}`, { headers: { "x-admin-key": ADMIN_KEY } })).json()) as any

  const partitionsOf = async (server: { url: string }) => new Set<number>((await get(server, "/admin/ownership")).partitions ?? [])

  /**
   * Tenants whose order sync fetched pages on `server` during the last `ms`. The page counter
   * is the server's own; the rest of the sync state (lastRunAt, cursors) is shared by the
   * servers (SharedSyncState), so it moves on both whoever pulled.
   */
  const pulledRecently = async (server: { url: string }, ms: number) => {
    const before = new Map<string, number>((await get(server, "/admin/sync")).sync.map((s: any) => [s.appId, s.pages ?? 0]))
    await new Promise((r) => setTimeout(r, ms))
    const after: Array<any> = (await get(server, "/admin/sync")).sync
    return new Set(after.filter((s) => (s.pages ?? 0) > (before.get(s.appId) ?? 0)).map((s) => s.appId as string))
  }

  it("each tenant is pulled by exactly one server; a dead server's tenants move", async () => {
    const [pa, pb] = await eventually("the group's assignment settling on both servers", async () => {
      const pa = await partitionsOf(servers[0]!)
      const pb = await partitionsOf(servers[1]!)
      const disjoint = [...pa].every((p) => !pb.has(p))
      return disjoint && pa.size > 0 && pb.size > 0 && pa.size + pb.size === 16 ? [pa, pb] : undefined
    }, 60_000, 500)
    const ownerOf = (t: { appId: string; businessId: string }) => (pa.has(partitionOf(t.appId, t.businessId, 16)) ? 0 : 1)
    const [ra, rb] = await Promise.all([pulledRecently(servers[0]!, 4000), pulledRecently(servers[1]!, 4000)])
    for (const t of tenants) {
      const owner = ownerOf(t)
      assert.strictEqual(ra.has(t.appId), owner === 0, `tenant ${t.appId}: pulled by server A iff A owns it`)
      assert.strictEqual(rb.has(t.appId), owner === 1, `tenant ${t.appId}: pulled by server B iff B owns it`)
    }
    console.log(`shared pulls: server A owns ${pa.size} partitions (${ra.size} tenants), server B ${pb.size} (${rb.size} tenants)`)

    // The first server dies; after the group's session timeout the second owns and pulls all.
    await servers[0]!.proc.stop("SIGKILL")
    await eventually("the survivor owning every partition", async () => ((await partitionsOf(servers[1]!)).size === 16 ? true : undefined), 60_000, 500)
    const survivor = await eventually("the survivor pulling every tenant", async () => {
      const pulled = await pulledRecently(servers[1]!, 2500)
      return pulled.size === TENANTS ? pulled : undefined
    }, 30_000, 0)
    assert.strictEqual(survivor.size, TENANTS)
  }, 180_000)
})
