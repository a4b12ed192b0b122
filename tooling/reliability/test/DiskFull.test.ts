/**
 * A full disk under the read models: the server's read-models file lives on a small tmpfs
 * (the data folder holds a symlink to it), which the test fills with a filler file while the
 * server runs, so projection writes fail with SQLITE_FULL; the event log's file is elsewhere
 * and keeps room. Properties: webhooks are still stored (200); `/readyz` turns 503 naming the
 * projection and `/metrics` shows it down; once the filler is removed the read models catch
 * up without a restart of the process and `/readyz` is 200 again.
 *
 * Mounting a tmpfs needs root. Off CI and not root the test is skipped with a message; on CI
 * it runs (and fails if it cannot mount).
 */
import { assert, describe, it } from "vitest"
import { ADMIN_KEY, admin, envelope, eventually, files, maxOffset, projectedOffset, request, type Tenant } from "./support/harness.ts"
import { canMountSmallDisk, smallDisks } from "./support/smallDisk.ts"
import { reliabilitySuite } from "./support/suite.ts"

const canMount = canMountSmallDisk("disk-full", "the read-models file")

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

const disks = smallDisks()

const product = (i: number) =>
  envelope(t, "productUpdate", { id: 9_100_000 + i, name: `full-${i}`, price: i, updatedAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString() })

const metricLine = async (url: string, name: string) => {
  const a = await request(`${url}/metrics`)
  return a.text.split("\n").find((l) => l.startsWith(name))
}

describe("disk full under the read models", () => {
  it.skipIf(!canMount)("keeps storing webhooks, reports the projection down, and catches up once space returns", async () => {
    const server = suite.server("ocs-rel-diskfull-", { tenants: [t], extra: { server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY, readiness: { maxProjectionLagSeconds: 3600 } } } })
    const dataDir = server.dataDir
    const disk = disks.under(dataDir, files(dataDir).readModels)

    const proc = await server.start()
    const url = server.url
    const pid = proc.proc.child.pid
    for (let i = 0; i < 20; i++) assert.strictEqual((await request(`${url}/webhooks/${t.appId}`, { body: product(i) })).status, 200)
    await eventually("the first webhooks projected", async () => projectedOffset(dataDir) >= maxOffset(dataDir) ? true : undefined, 30_000)
    assert.strictEqual((await request(`${url}/readyz`)).status, 200)

    disk.fill()

    const before = maxOffset(dataDir)
    const t0 = performance.now()
    let stored = 0
    for (let i = 20; i < 2020; i++) if ((await request(`${url}/webhooks/${t.appId}`, { body: product(i) })).status === 200) stored++
    console.log(`[disk-full] 2000 webhooks with the read-models disk full: ${stored} answered 200 in ${Math.round(performance.now() - t0)} ms`)
    assert.strictEqual(stored, 2000, "every webhook is stored while the read-models disk is full")
    assert.isAtLeast(maxOffset(dataDir) - before, 2000)

    const notReady = await eventually("/readyz to name the projection", async () => {
      const a = await request(`${url}/readyz`)
      return a.status === 503 && a.text.includes("projection") ? a : undefined
    }, 30_000, 100)
    console.log(`[disk-full] /readyz: ${notReady.status} ${notReady.text}`)
    const up = await metricLine(url, `ocs_loop_up{loop="projection"}`)
    const restarts = await metricLine(url, `ocs_loop_restarts_total{loop="projection"}`)
    const lag = await metricLine(url, "ocs_projection_lag_records")
    console.log(`[disk-full] metrics: ${up}; ${restarts}; ${lag}`)
    assert.strictEqual(up, `ocs_loop_up{loop="projection"} 0`)
    assert.isAbove(Number(lag?.split(" ")[1]), 0)
    assert.isTrue(server.output().includes("loop projection failed"), "the failure is logged with the loop's name")
    const missing = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/products/${9_100_000 + 2019}`)
    assert.strictEqual(missing.status, 404, "not projected while the disk is full")

    // Space returns: the same process catches up.
    disk.free()
    const t1 = performance.now()
    await eventually("the read models to catch up", async () => projectedOffset(dataDir) >= maxOffset(dataDir) ? true : undefined, 60_000, 200)
    await eventually("/readyz to be 200", async () => ((await request(`${url}/readyz`)).status === 200 ? true : undefined), 30_000, 100)
    console.log(`[disk-full] caught up and ready ${Math.round(performance.now() - t1)} ms after space returned`)
    const found = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}/products/${9_100_000 + 2019}`)
    assert.strictEqual(found.status, 200)
    assert.strictEqual(await metricLine(url, `ocs_loop_up{loop="projection"}`), `ocs_loop_up{loop="projection"} 1`)
    assert.strictEqual(server.current?.proc.child.pid, pid, "no restart of the process")
    assert.isTrue(server.alive())
  }, 240_000)
})
